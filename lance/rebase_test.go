package lance_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/vfs"
	"github.com/mvd-project/mvd/vfs/errorfs"
)

// raceAhead is an errorfs injector that, each time the writer under test
// is about to link a manifest into _versions/, first has another writer
// append to the table, so the version is taken when the link runs: the
// writer loses the race `wins` times in a row.
type raceAhead struct {
	t    *testing.T
	root string

	mu   sync.Mutex
	wins int
	next int64
}

func (r *raceAhead) MaybeInject(p errorfs.Point) error {
	if p.Op != errorfs.OpLink || !strings.Contains(p.Path, "_versions/") || !strings.HasSuffix(p.Path, ".manifest") {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.wins == 0 {
		return nil
	}
	r.wins--
	r.next++
	if _, err := appendIDs(r.root, []int64{10000 + r.next}, nil); err != nil {
		r.t.Errorf("the other writer's append: %v", err)
	}
	return nil
}

// TestRebaseRetryLimit has another writer take the version a commit is
// about to publish, again and again: the commit rebases up to MaxRetries
// times (20 by default, as Lance) and lands, one race more and it gives
// up with ErrConflict, having published nothing.
func TestRebaseRetryLimit(t *testing.T) {
	for _, tc := range []struct {
		maxRetries, lost int
		lands            bool
	}{
		{maxRetries: 2, lost: 2, lands: true},
		{maxRetries: 2, lost: 3, lands: false},
		{maxRetries: 0, lost: 20, lands: true},
		{maxRetries: 0, lost: 21, lands: false},
	} {
		tt := createBase(t, "2.2", idRange(0, 10))
		race := &raceAhead{t: t, root: tt.root, wins: tc.lost}
		tbl, err := lance.Open(context.Background(), errorfs.Wrap(vfs.OS(), race), tt.root)
		if err != nil {
			t.Fatal(err)
		}
		base, err := tbl.Checkout(context.Background(), 1)
		if err != nil {
			t.Fatal(err)
		}
		m, err := tbl.Commit(context.Background(), base, &lance.Commit{Fragments: tt.write([]int64{500}), MaxRetries: tc.maxRetries})
		latest := tt.at(0)
		switch {
		case tc.lands && err != nil:
			t.Errorf("max %d, lost %d races: %v", tc.maxRetries, tc.lost, err)
		case tc.lands && (m.Version != uint64(tc.lost)+2 || latest.Version != m.Version || latest.LiveRows() != 10+uint64(tc.lost)+1):
			t.Errorf("max %d, lost %d races: landed as version %d; latest %d with %d rows", tc.maxRetries, tc.lost, m.Version, latest.Version, latest.LiveRows())
		case !tc.lands && !errors.Is(err, lance.ErrConflict):
			t.Errorf("max %d, lost %d races: err = %v, want ErrConflict", tc.maxRetries, tc.lost, err)
		case !tc.lands && (latest.Version != uint64(tc.lost)+1 || latest.LiveRows() != 10+uint64(tc.lost)):
			t.Errorf("max %d, lost %d races: the commit that gave up left version %d with %d rows", tc.maxRetries, tc.lost, latest.Version, latest.LiveRows())
		}
		if race.wins != 0 {
			t.Errorf("max %d, lost %d races: the commit stopped after %d of them", tc.maxRetries, tc.lost, tc.lost-race.wins)
		}
	}
}

// TestOverwriteRebase: an overwrite replaces whatever was committed
// meanwhile, so it rebases over any commit, except one that changed a
// schema metadata key the overwrite sets too.
func TestOverwriteRebase(t *testing.T) {
	for _, tc := range []struct {
		name     string
		theirs   map[string]string // the concurrent append's metadata
		mine     map[string]string // the overwrite's
		conflict bool
	}{
		{name: "plain over plain"},
		{name: "plain over a watermark", theirs: map[string]string{"mv.k": "1"}},
		{name: "watermark over another key", theirs: map[string]string{"mv.other": "1"}, mine: map[string]string{"mv.k": "2"}},
		{name: "watermark over the same key", theirs: map[string]string{"mv.k": "1"}, mine: map[string]string{"mv.k": "2"}, conflict: true},
	} {
		tt := createBase(t, "2.2", idRange(0, 10))
		won, err := appendIDs(tt.root, []int64{100}, tc.theirs)
		if err != nil {
			t.Fatal(err)
		}
		m, err := tt.tbl.Commit(context.Background(), tt.at(1), &lance.Commit{Overwrite: true, Fragments: tt.write(idRange(50, 55)), SchemaMetadata: tc.mine})
		var ce *lance.ConflictError
		switch {
		case tc.conflict:
			if !errors.As(err, &ce) || ce.Version != won.Version {
				t.Errorf("%s: err = %v, want a conflict with version %d", tc.name, err, won.Version)
			}
			if latest := tt.at(0); latest.Version != won.Version {
				t.Errorf("%s: the refused overwrite published version %d", tc.name, latest.Version)
			}
		case err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case m.Version != won.Version+1 || m.LiveRows() != 5 || (tc.mine != nil && m.Schema.Metadata["mv.k"] != tc.mine["mv.k"]):
			t.Errorf("%s: version %d, %d rows, metadata %v", tc.name, m.Version, m.LiveRows(), m.Schema.Metadata)
		}
	}
}
