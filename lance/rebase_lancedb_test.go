package lance_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/mvd-project/mvd/internal/lancedbtest"
	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/lance/datawriter"
	"github.com/mvd-project/mvd/vfs"
)

// The outcomes of the second of two commits planned on the same version.
const (
	outOK        = "ok"        // it commits over the first (rebased)
	outRetryable = "retryable" // Lance: "Retryable commit conflict"; mvd: a *ConflictError
	outConflict  = "conflict"  // Lance: a commit conflict it does not retry; mvd: a *ConflictError
)

// pairRecord builds fixture rows as LanceDB's harness builds it (lib/data.mjs
// rowFor): name "<prefix>-<id>" (prefix by variant), null for every tenth
// id ending in 3 (name, when set, names every row). Values are not
// compared, only ids and names.
func pairRecord(ids []int64, variant int, name string) arrow.RecordBatch {
	b := array.NewRecordBuilder(memory.DefaultAllocator, baseSchema)
	defer b.Release()
	for _, id := range ids {
		b.Field(0).(*array.Int64Builder).Append(id)
		switch {
		case name != "":
			b.Field(1).(*array.StringBuilder).Append(name)
		case id%10 == 3:
			b.Field(1).(*array.StringBuilder).AppendNull()
		default:
			b.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("%s-%d", []string{"n", "mi", "ow"}[variant], id))
		}
		b.Field(2).(*array.Float64Builder).Append(float64(id) / 4)
	}
	return b.NewRecordBatch()
}

// pairTable creates version 1 (ids 0..99, one fragment) and version 2
// (ids 100..109 appended, a second fragment) at root.
func pairTable(t *testing.T, root string) *lance.Table {
	t.Helper()
	schema, err := lance.NewSchemaFromArrow(baseSchema)
	if err != nil {
		t.Fatal(err)
	}
	write := func(rec arrow.RecordBatch) []lance.NewFragment {
		defer rec.Release()
		frags, err := datawriter.WriteFragments(vfs.OS(), root, schema, "2.2", []arrow.RecordBatch{rec})
		if err != nil {
			t.Fatal(err)
		}
		return frags
	}
	ctx := context.Background()
	tbl, v1, err := lance.Create(ctx, vfs.OS(), root, lance.CreateOptions{Schema: schema, Fragments: write(pairRecord(idRange(0, 100), 0, ""))})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tbl.Commit(ctx, v1, &lance.Commit{Fragments: write(pairRecord(idRange(100, 110), 0, ""))}); err != nil {
		t.Fatal(err)
	}
	return tbl
}

// pairOp is one operation, as LanceDB's harness runs it and, for the
// second commit of a pair, as mvd's lance package commits it (planned on
// snapshot at, writing through root).
type pairOp struct {
	name    string
	lancedb map[string]any
	// op is the Lance operation a winner commits (among others: LanceDB's
	// compaction may reserve fragments first).
	op  lance.Operation
	mvd func(t *testing.T, tbl *lance.Table, at *lance.Snapshot, root string) *lance.Commit
}

func pairWrite(t *testing.T, root string, at *lance.Snapshot, rec arrow.RecordBatch) []lance.NewFragment {
	t.Helper()
	defer rec.Release()
	frags, err := datawriter.WriteFragments(vfs.OS(), root, at.Schema, at.DataFileVersion, []arrow.RecordBatch{rec})
	if err != nil {
		t.Fatal(err)
	}
	return frags
}

func pairRowIDs(t *testing.T, tbl *lance.Table, at *lance.Snapshot, id int64) *roaring64.Bitmap {
	t.Helper()
	ids, err := rowIDsByScan(tbl, at, id)
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

// The first commits of the pairs: LanceDB operations of every kind.
var pairWinners = []pairOp{
	{name: "append", op: lance.OpAppend, lancedb: map[string]any{"op": "add", "start": 200, "n": 5}},
	{name: "delete of the row", op: lance.OpDelete, lancedb: map[string]any{"op": "delete", "where": "id = 5"}},
	{name: "delete of another row of its fragment", op: lance.OpDelete, lancedb: map[string]any{"op": "delete", "where": "id = 6"}},
	{name: "delete in another fragment", op: lance.OpDelete, lancedb: map[string]any{"op": "delete", "where": "id = 105"}},
	{name: "update of the row", op: lance.OpUpdate, lancedb: map[string]any{"op": "update", "where": "id = 5", "values": map[string]string{"name": "'w'"}}},
	{name: "update of another row of its fragment", op: lance.OpUpdate, lancedb: map[string]any{"op": "update", "where": "id = 6", "values": map[string]string{"name": "'w'"}}},
	{name: "update in another fragment", op: lance.OpUpdate, lancedb: map[string]any{"op": "update", "where": "id = 105", "values": map[string]string{"name": "'w'"}}},
	{name: "overwrite", op: lance.OpOverwrite, lancedb: map[string]any{"op": "overwrite", "start": 300, "n": 5}},
	{name: "restore", op: lance.OpRestore, lancedb: map[string]any{"op": "restore", "version": 1}},
	{name: "compaction", op: lance.OpRewrite, lancedb: map[string]any{"op": "optimize"}},
	{name: "create index", op: lance.OpCreateIndex, lancedb: map[string]any{"op": "create_index", "column": "id"}},
}

// The second commits: what mvd commits, and the same change as a LanceDB
// operation.
var pairLosers = []pairOp{
	{name: "append", lancedb: map[string]any{"op": "add", "start": 1000, "n": 5},
		mvd: func(t *testing.T, tbl *lance.Table, at *lance.Snapshot, root string) *lance.Commit {
			return &lance.Commit{Fragments: pairWrite(t, root, at, pairRecord(idRange(1000, 1005), 0, ""))}
		}},
	{name: "delete", lancedb: map[string]any{"op": "delete", "where": "id = 5"},
		mvd: func(t *testing.T, tbl *lance.Table, at *lance.Snapshot, root string) *lance.Commit {
			return &lance.Commit{DeleteRowIDs: pairRowIDs(t, tbl, at, 5)}
		}},
	{name: "update", lancedb: map[string]any{"op": "update", "where": "id = 5", "values": map[string]string{"name": "'l'"}},
		mvd: func(t *testing.T, tbl *lance.Table, at *lance.Snapshot, root string) *lance.Commit {
			return &lance.Commit{DeleteRowIDs: pairRowIDs(t, tbl, at, 5), Fragments: pairWrite(t, root, at, pairRecord([]int64{5}, 0, "l"))}
		}},
	{name: "overwrite", lancedb: map[string]any{"op": "overwrite", "start": 2000, "n": 5},
		mvd: func(t *testing.T, tbl *lance.Table, at *lance.Snapshot, root string) *lance.Commit {
			return &lance.Commit{Overwrite: true, Fragments: pairWrite(t, root, at, pairRecord(idRange(2000, 2005), 2, ""))}
		}},
}

// pairResult is what the harness's "pairs" command reports for one case.
type pairResult struct {
	Outcome string   `json:"outcome"`
	Error   string   `json:"error"`
	Retried string   `json:"retried"`
	Version uint64   `json:"version"`
	Rows    []string `json:"rows"`
}

func runPairs(t *testing.T, cases []map[string]any) []pairResult {
	t.Helper()
	b, err := json.Marshal(cases)
	if err != nil {
		t.Fatal(err)
	}
	var out []pairResult
	if err := json.Unmarshal(lancedbtest.RunNode(t, "interop.mjs", "pairs", string(b)), &out); err != nil || len(out) != len(cases) {
		t.Fatalf("decode interop pairs (%d results for %d cases): %v", len(out), len(cases), err)
	}
	return out
}

// rebaseRules is, for every pair of a LanceDB commit (winner) and a second
// commit planned on the same version (loser), what LanceDB 0.39 does with
// the second and what mvd's rebase does. mvd never rebases what Lance
// would not (it has no retry of its own: a retryable conflict is a
// *ConflictError, the caller plans again), and where Lance rebases
// automatically mvd does too, landing the same rows, except where noted.
var rebaseRules = []struct {
	winner, loser string
	lancedb, mvd  string
	why           string
}{
	{"append", "append", outOK, outOK, ""},
	{"append", "delete", outOK, outOK, ""},
	{"append", "update", outOK, outOK, ""},
	{"append", "overwrite", outOK, outOK, ""},
	{"delete of the row", "append", outOK, outOK, ""},
	{"delete of the row", "delete", outOK, outConflict, "mvd refuses a delete of a row deleted meanwhile (Lance merges the two deletion vectors; the rows are the same either way)"},
	{"delete of the row", "update", outOK, outConflict, "mvd refuses to update a row deleted meanwhile (Lance's rebased update of the gone row writes nothing)"},
	{"delete of the row", "overwrite", outOK, outOK, ""},
	{"delete of another row of its fragment", "append", outOK, outOK, ""},
	{"delete of another row of its fragment", "delete", outOK, outOK, ""},
	{"delete of another row of its fragment", "update", outOK, outOK, ""},
	{"delete of another row of its fragment", "overwrite", outOK, outOK, ""},
	{"delete in another fragment", "append", outOK, outOK, ""},
	{"delete in another fragment", "delete", outOK, outOK, ""},
	{"delete in another fragment", "update", outOK, outOK, ""},
	{"delete in another fragment", "overwrite", outOK, outOK, ""},
	{"update of the row", "append", outOK, outOK, ""},
	{"update of the row", "delete", outOK, outConflict, "mvd refuses to delete a row updated meanwhile: Lance deletes the new value unseen"},
	{"update of the row", "update", outOK, outConflict, "mvd refuses to update a row updated meanwhile: Lance keeps the second value, a lost update"},
	{"update of the row", "overwrite", outOK, outOK, ""},
	{"update of another row of its fragment", "append", outOK, outOK, ""},
	{"update of another row of its fragment", "delete", outOK, outOK, ""},
	{"update of another row of its fragment", "update", outOK, outOK, ""},
	{"update of another row of its fragment", "overwrite", outOK, outOK, ""},
	{"update in another fragment", "append", outOK, outOK, ""},
	{"update in another fragment", "delete", outOK, outOK, ""},
	{"update in another fragment", "update", outOK, outOK, ""},
	{"update in another fragment", "overwrite", outOK, outOK, ""},
	{"overwrite", "append", outConflict, outConflict, ""},
	{"overwrite", "delete", outConflict, outConflict, ""},
	{"overwrite", "update", outConflict, outConflict, ""},
	{"overwrite", "overwrite", outRetryable, outOK, "an overwrite replaces whatever was committed meanwhile: mvd lands at once the rows Lance lands on its retry"},
	{"restore", "append", outConflict, outConflict, ""},
	{"restore", "delete", outConflict, outConflict, ""},
	{"restore", "update", outConflict, outConflict, ""},
	{"restore", "overwrite", outOK, outOK, ""},
	{"compaction", "append", outOK, outOK, ""},
	{"compaction", "delete", outOK, outOK, ""},
	{"compaction", "update", outOK, outOK, ""},
	{"compaction", "overwrite", outOK, outOK, ""},
	{"create index", "append", outOK, outOK, ""},
	{"create index", "delete", outOK, outOK, ""},
	{"create index", "update", outOK, outOK, ""},
	{"create index", "overwrite", outOK, outOK, ""},
}

// TestRebaseRulesAgainstLanceDB commits every pair of operations planned
// on one version — a LanceDB operation first, then a second one — twice:
// on one copy LanceDB commits the second through a stale handle, on the
// other mvd does. Each outcome (rebased, retryable conflict, conflict) is
// the one rebaseRules states, mvd conflicts wherever LanceDB would not
// rebase on its own, and where both commit they leave the same rows (read
// by LanceDB).
func TestRebaseRulesAgainstLanceDB(t *testing.T) {
	lancedbtest.Require(t)
	t.Parallel()
	ctx := context.Background()
	type pairCase struct {
		winner, loser pairOp
		lanceRoot     string
		mvdRoot       string
		tbl           *lance.Table
		planned       *lance.Snapshot
		commit        *lance.Commit
	}
	var cases []*pairCase
	var lanceCases, winnerCases []map[string]any
	dir := t.TempDir()
	for _, w := range pairWinners {
		for _, l := range pairLosers {
			c := &pairCase{winner: w, loser: l}
			n := len(cases)
			c.lanceRoot = filepath.Join(dir, fmt.Sprintf("l%d.lance", n))
			c.mvdRoot = filepath.Join(dir, fmt.Sprintf("m%d.lance", n))
			pairTable(t, c.lanceRoot)
			c.tbl = pairTable(t, c.mvdRoot)
			c.planned = wrCheckout(t, c.tbl, 2)
			c.commit = l.mvd(t, c.tbl, c.planned, c.mvdRoot)
			cases = append(cases, c)
			lanceCases = append(lanceCases, map[string]any{"table": c.lanceRoot, "winner": w.lancedb, "loser": l.lancedb})
			winnerCases = append(winnerCases, map[string]any{"table": c.mvdRoot, "winner": w.lancedb})
		}
	}
	// One harness process runs every LanceDB pair, another every winner
	// on mvd's copies.
	lanceRes := runPairs(t, append(lanceCases, winnerCases...))
	mvdOut := make([]string, len(cases))
	winnerOps := make([][]lance.Operation, len(cases))
	var reads []map[string]any
	for i, c := range cases {
		before, err := c.tbl.LatestVersion(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for v := uint64(3); v <= before; v++ {
			tx, err := wrCheckout(t, c.tbl, v).Transaction(ctx)
			if err != nil || tx == nil {
				t.Fatalf("%s: version %d: transaction %v, %v", c.winner.name, v, tx, err)
			}
			winnerOps[i] = append(winnerOps[i], tx.Operation)
		}
		_, err = c.tbl.Commit(ctx, c.planned, c.commit)
		var ce *lance.ConflictError
		switch {
		case err == nil:
			mvdOut[i] = outOK
		case errors.As(err, &ce) && errors.Is(err, lance.ErrConflict):
			mvdOut[i] = outConflict
			if after, _ := c.tbl.LatestVersion(ctx); after != before {
				t.Errorf("%s over %s: mvd's refused commit published version %d", c.loser.name, c.winner.name, after)
			}
		default:
			mvdOut[i] = "error"
			t.Errorf("%s over %s: mvd: %v", c.loser.name, c.winner.name, err)
		}
		reads = append(reads, map[string]any{"table": c.mvdRoot})
	}
	mvdRes := runPairs(t, reads)
	rules := map[[2]string]int{}
	for i, r := range rebaseRules {
		rules[[2]string{r.winner, r.loser}] = i
	}
	for i, c := range cases {
		lr, mr := lanceRes[i], mvdRes[i]
		name := c.loser.name + " over " + c.winner.name
		t.Logf("%-50s lancedb %-9s mvd %-8s %s", name, lr.Outcome, mvdOut[i], firstLine(lr.Error))
		if !slices.Contains(winnerOps[i], c.winner.op) {
			t.Errorf("%s: the winner committed %v, not a %s", name, winnerOps[i], c.winner.op)
		}
		ri, ok := rules[[2]string{c.winner.name, c.loser.name}]
		if !ok {
			t.Errorf("%s: no rule", name)
			continue
		}
		rule := rebaseRules[ri]
		if lr.Outcome != rule.lancedb || (lr.Outcome == outRetryable && lr.Retried != outOK) {
			t.Errorf("%s: LanceDB's second commit: %s (retried: %q), the rules say %s: %s", name, lr.Outcome, lr.Retried, rule.lancedb, firstLine(lr.Error))
		}
		if mvdOut[i] != rule.mvd {
			t.Errorf("%s: mvd's rebase: %s, want %s (as LanceDB: %s)", name, mvdOut[i], rule.mvd, lr.Outcome)
		}
		// The rules themselves: mvd never rebases what Lance does not, and
		// differs from Lance only where the rule says why.
		if rule.lancedb != rule.mvd && rule.why == "" {
			t.Errorf("%s: mvd's rule (%s) differs from LanceDB's (%s) without a reason", name, rule.mvd, rule.lancedb)
		}
		if rule.lancedb == outConflict && rule.mvd != outConflict {
			t.Errorf("%s: mvd rebases what LanceDB refuses", name)
		}
		// Where both land, they land the same rows.
		if mvdOut[i] == outOK && lr.Outcome != outConflict && !slices.Equal(lr.Rows, mr.Rows) {
			t.Errorf("%s: rows differ: only LanceDB's %v, only mvd's %v", name, diffRows(lr.Rows, mr.Rows), diffRows(mr.Rows, lr.Rows))
		}
	}
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 160 {
		s = s[:160]
	}
	return s
}

func diffRows(a, b []string) []string {
	var out []string
	for _, r := range a {
		if !slices.Contains(b, r) {
			out = append(out, r)
		}
	}
	return out
}
