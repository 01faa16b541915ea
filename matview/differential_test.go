package matview

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/mvd-project/mvd/internal/lancedbtest"
	"github.com/mvd-project/mvd/plan"
	"github.com/mvd-project/mvd/sqlexpr"
)

// toDefinition converts a harness view spec to mvd's.
func toDefinition(s lancedbtest.ViewSpec) Definition {
	d := Definition{Where: s.Where, Limit: s.Limit}
	for _, p := range s.Select {
		e := p.Expr
		if e == "" {
			e = sqlexpr.QuoteIdent(p.Name)
		}
		d.Select = append(d.Select, plan.Projection{Output: p.Name, Expression: e})
	}
	return d
}

// diffSequences is the op sequences the differential test runs: every
// sequence of up to 2 ops and a seeded sample of length 3, plus a sample of
// length 4–6 (CI); MVD_DIFF_FULL=1 (make bench) runs every sequence of up
// to 3 and 40 of length 4–6.
func diffSequences() [][]lancedbtest.OpKind {
	kinds := lancedbtest.OpKinds
	if os.Getenv("MVD_DIFF_FULL") != "" {
		seqs := lancedbtest.Sequences(kinds, 3)
		return append(seqs, lancedbtest.SampleSequences(7, 40, 4, 6, kinds)...)
	}
	if testing.Short() {
		return lancedbtest.SampleSequences(3, 12, 1, 3, kinds)
	}
	seqs := lancedbtest.Sequences(kinds, 2)
	seqs = append(seqs, lancedbtest.SampleSequences(5, 10, 3, 3, kinds)...)
	return append(seqs, lancedbtest.SampleSequences(7, 3, 4, 6, kinds)...)
}

// TestDifferentialOpSequences applies op sequences with LanceDB 0.39 to a
// source and, after every op, refreshes each view shape with mvd and has
// LanceDB check the view holds exactly its definition evaluated on the
// source at the refreshed version. Modes are checked too: only an
// overwrite may rebuild. A final full rebuild must give the same rows.
func TestDifferentialOpSequences(t *testing.T) {
	lancedbtest.Require(t)
	dir := t.TempDir()
	d := lancedbtest.StartDriver(t, dir)
	runDifferential(t, d, openDB(t, dir), diffSequences())
}

// runDifferential is TestDifferentialOpSequences's run of the sequences
// with LanceDB's driver d and mvd's database db, on one database.
func runDifferential(t *testing.T, d *lancedbtest.Driver, db *DB, seqs [][]lancedbtest.OpKind) {
	ctx := context.Background()
	for i, seq := range seqs {
		name := lancedbtest.SequenceName(seq)
		t.Run(name, func(t *testing.T) {
			src := fmt.Sprintf("s%d", i)
			if _, err := d.CreateTable(src, lancedbtest.SourceSchema(), lancedbtest.SourceRows(0, lancedbtest.InitialRows, 0)); err != nil {
				t.Fatal(err)
			}
			var views []string // in dependency order
			for _, shape := range lancedbtest.ViewShapes(src) {
				for _, v := range shape.Views {
					vn := fmt.Sprintf("%s_%s_%s", src, shape.Name, v.Name)
					source := v.Source
					if source != src {
						source = fmt.Sprintf("%s_%s_%s", src, shape.Name, source)
					}
					if _, err := db.CreateView(ctx, vn, source, toDefinition(v.Spec)); err != nil {
						t.Fatalf("create %s: %v", vn, err)
					}
					views = append(views, vn)
				}
			}
			refreshAll := func(step string, allowRebuild bool) {
				t.Helper()
				for _, vn := range views {
					v, err := db.OpenView(context.Background(), vn)
					if err != nil {
						t.Fatal(err)
					}
					before := mustLatest(t, v).Version
					r, err := v.Refresh(ctx, RefreshOptions{})
					if err != nil {
						t.Fatalf("after %s: refresh %s: %v", step, vn, err)
					}
					// Exactly one view version per refresh, none for no_op.
					if want := before + map[bool]uint64{true: 0, false: 1}[r.Mode == ModeNoOp]; r.Version != want || mustLatest(t, v).Version != want {
						t.Fatalf("after %s: refresh %s went from view version %d to %d (%s)", step, vn, before, r.Version, r.Mode)
					}
					if r.Mode == ModeRebuild && !allowRebuild {
						t.Fatalf("after %s: refresh %s rebuilt (%s)", step, vn, r.Reason)
					}
					if err := d.CheckView(vn, r.SourceVersion); err != nil {
						t.Fatalf("after %s: view %s (%+v): %v", step, vn, r, err)
					}
				}
			}
			refreshAll("create", true)
			gen := lancedbtest.NewOpGen()
			var done []string
			for _, k := range seq {
				op := gen.Next(k)
				if _, err := d.Apply(src, op); err != nil {
					t.Fatalf("%s: %v", op, err)
				}
				done = append(done, op.String())
				refreshAll(strings.Join(done, ", "), k == lancedbtest.Overwrite)
			}
			for _, vn := range views {
				v, _ := db.OpenView(context.Background(), vn)
				before := rowsOf(t, mustLatest(t, v), "__source_row_id")
				r, err := v.Refresh(ctx, RefreshOptions{Full: true})
				if err != nil || r.Mode != ModeRebuild {
					t.Fatalf("full refresh %s: %+v %v", vn, r, err)
				}
				if err := d.CheckView(vn, r.SourceVersion); err != nil {
					t.Fatalf("after the full rebuild: %s: %v", vn, err)
				}
				if !strings.Contains(vn, "limited") {
					after := rowsOf(t, mustLatest(t, v), "__source_row_id")
					if strings.Join(before, "\n") != strings.Join(after, "\n") {
						t.Fatalf("%s: the full rebuild differs from the incremental result", vn)
					}
				}
			}
		})
	}
}
