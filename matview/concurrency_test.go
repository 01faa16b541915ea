package matview

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/mvd-project/mvd/internal/lancedbtest"
	"github.com/mvd-project/mvd/vfs"
)

// raceOutcome tallies the results of refreshers racing on one view step.
type raceOutcome struct {
	mu        sync.Mutex
	committed []*Result
	noop      int
	conflicts []*ConflictError
	other     []error
}

func (o *raceOutcome) add(r *Result, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	var ce *ConflictError
	switch {
	case err == nil && r.Mode == ModeNoOp:
		o.noop++
	case err == nil:
		o.committed = append(o.committed, r)
	case errors.As(err, &ce) && errors.Is(err, ErrConflict):
		o.conflicts = append(o.conflicts, ce)
	default:
		o.other = append(o.other, err)
	}
}

// check asserts exactly one refresher committed, as view version want, and
// every loser names it.
func (o *raceOutcome) check(t *testing.T, want uint64) {
	t.Helper()
	if len(o.other) > 0 {
		t.Fatalf("unexpected errors: %v", o.other)
	}
	if len(o.committed) != 1 {
		t.Fatalf("%d refreshers committed (%+v), want exactly 1", len(o.committed), o.committed)
	}
	if o.committed[0].Version != want {
		t.Fatalf("the winner committed version %d, want %d", o.committed[0].Version, want)
	}
	for _, c := range o.conflicts {
		if c.Version != want {
			t.Fatalf("a loser names version %d, the winner is %d: %v", c.Version, want, c)
		}
	}
}

// TestConcurrentRefreshersGoroutines: N goroutines, each with its own DB
// (so nothing in memory is shared), refresh one view after each source
// step: exactly one commit per step, losers fail with ErrConflict naming
// the winner, and the view is right.
func TestConcurrentRefreshersGoroutines(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	src := newGoSource(t, vfs.OS(), dir, "src", 200)
	db0 := openDB(t, dir)
	must[*View](t)(db0.CreateView(ctx, "v", "src", Definition{Where: "amount > 30"}))
	const n = 6
	dbs := make([]*DB, n)
	for i := range dbs {
		dbs[i] = openDB(t, dir)
	}
	version := uint64(1)
	for step := 0; step < 4; step++ {
		switch step {
		case 1:
			src.append(t, 200, 300)
		case 2:
			src.deleteWhere(t, func(id int64) bool { return id%7 != 0 })
		case 3:
			src.append(t, 300, 301)
		}
		var out raceOutcome
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				v, err := dbs[i].OpenView(context.Background(), "v")
				if err != nil {
					out.add(nil, err)
					return
				}
				out.add(v.Refresh(ctx, RefreshOptions{}))
			}()
		}
		wg.Wait()
		version++
		out.check(t, version)
		checkView(t, db0, "v")
	}
	// One handle shared by many goroutines: refreshes serialize, the first
	// commits, the rest find nothing to do.
	src.append(t, 301, 320)
	v := must[*View](t)(db0.OpenView(context.Background(), "v"))
	var out raceOutcome
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() { defer wg.Done(); out.add(v.Refresh(ctx, RefreshOptions{})) }()
	}
	wg.Wait()
	out.check(t, version+1)
	if out.noop != n-1 {
		t.Fatalf("shared handle: %d no_op, want %d", out.noop, n-1)
	}
	checkView(t, db0, "v")
}

// TestHelperRefreshProcess is not a test: TestConcurrentRefreshersProcesses
// runs the test binary as a child process that refreshes one view and
// prints the outcome.
func TestHelperRefreshProcess(t *testing.T) {
	dir := os.Getenv("MVD_TEST_REFRESH_DIR")
	if dir == "" {
		t.Skip("helper process only")
	}
	db, err := Open(dir)
	if err == nil {
		var v *View
		if v, err = db.OpenView(context.Background(), os.Getenv("MVD_TEST_REFRESH_VIEW")); err == nil {
			var r *Result
			if r, err = v.Refresh(context.Background(), RefreshOptions{}); err == nil {
				b, _ := json.Marshal(r)
				fmt.Printf("RESULT %s\n", b)
				return
			}
		}
	}
	var ce *ConflictError
	if errors.As(err, &ce) {
		fmt.Printf("CONFLICT %d\n", ce.Version)
		return
	}
	fmt.Printf("ERROR %v\n", err)
}

// TestConcurrentRefreshersProcesses: the same race across separate
// processes, which share nothing but the files.
func TestConcurrentRefreshersProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	ctx := context.Background()
	dir := t.TempDir()
	src := newGoSource(t, vfs.OS(), dir, "src", 500)
	db := openDB(t, dir)
	v := must[*View](t)(db.CreateView(ctx, "v", "src", Definition{}))
	must[*Result](t)(v.Refresh(ctx, RefreshOptions{}))
	src.append(t, 500, 5000)
	const n = 4
	outs := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(os.Args[0], "-test.run=^TestHelperRefreshProcess$", "-test.count=1")
			cmd.Env = append(os.Environ(), "MVD_TEST_REFRESH_DIR="+dir, "MVD_TEST_REFRESH_VIEW=v")
			b, err := cmd.Output()
			if err != nil {
				outs[i] = "ERROR " + err.Error()
				return
			}
			outs[i] = string(b)
		}()
	}
	wg.Wait()
	var out raceOutcome
	for _, s := range outs {
		switch {
		case strings.Contains(s, "RESULT "):
			var r Result
			line := s[strings.Index(s, "RESULT ")+7:]
			line = line[:strings.IndexByte(line, '\n')]
			if err := json.Unmarshal([]byte(line), &r); err != nil {
				t.Fatal(err)
			}
			out.add(&r, nil)
		case strings.Contains(s, "CONFLICT "):
			var ver uint64
			fmt.Sscanf(s[strings.Index(s, "CONFLICT ")+9:], "%d", &ver)
			out.add(nil, &ConflictError{View: "v", Version: ver})
		default:
			t.Fatalf("child: %s", s)
		}
	}
	out.check(t, 3)
	checkView(t, db, "v")
}

// TestRaceWithLanceDBRefresh: mvd and LanceDB refresh one view at the same
// time. Whatever the interleaving, at most one of them lands rows for the
// step, and after the race the view (refreshed once more by mvd if LanceDB
// left it unstamped) holds exactly the right rows.
func TestRaceWithLanceDBRefresh(t *testing.T) {
	lancedbtest.Require(t)
	ctx := context.Background()
	dir := t.TempDir()
	d := lancedbtest.StartDriver(t, dir)
	must[uint64](t)(d.CreateTable("src", lancedbtest.SourceSchema(), lancedbtest.SourceRows(0, 200, 0)))
	db := openDB(t, dir)
	v := must[*View](t)(db.CreateView(ctx, "v", "src", Definition{Where: "amount > 10"}))
	must[*Result](t)(v.Refresh(ctx, RefreshOptions{}))
	for round := 0; round < 4; round++ {
		must[uint64](t)(d.Add("src", lancedbtest.SourceRows(int64(200+round*50), int64(250+round*50), 0)))
		var wg sync.WaitGroup
		var mr *Result
		var merr, lerr error
		wg.Add(2)
		go func() { defer wg.Done(); mr, merr = v.Refresh(ctx, RefreshOptions{}) }()
		go func() { defer wg.Done(); _, lerr = d.Refresh("v", lancedbtest.RefreshOptions{}) }()
		wg.Wait()
		if merr != nil && !errors.Is(merr, ErrConflict) {
			t.Fatalf("round %d: mvd: %v", round, merr)
		}
		if merr == nil && mr.Mode != ModeNoOp && lerr == nil {
			// Both report success: LanceDB must have found mvd's work done.
			t.Logf("round %d: mvd %+v, LanceDB ok", round, mr)
		}
		// Settle: whoever lost, one more mvd refresh leaves it right.
		r := must[*Result](t)(v.Refresh(ctx, RefreshOptions{}))
		if err := d.CheckView("v", r.SourceVersion); err != nil {
			t.Fatalf("round %d (mvd %v, LanceDB %v, then %+v): %v", round, merr, lerr, r, err)
		}
	}
}
