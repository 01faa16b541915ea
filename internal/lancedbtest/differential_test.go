package lancedbtest

import (
	"testing"
)

// TestDifferentialLanceDB runs the differential test with LanceDB as the
// engine under test: the harness (ops, oracle, full-rebuild comparison)
// agrees with LanceDB on every view shape.
func TestDifferentialLanceDB(t *testing.T) {
	seqs := [][]OpKind{OpKinds}
	if !testing.Short() {
		seqs = append(seqs, SampleSequences(1, 1, 4, 6, OpKinds)...)
	}
	// One LanceDB process for every run, each in a fresh directory.
	d := StartDriver(t, t.TempDir())
	for _, shape := range ViewShapes("src") {
		for _, kinds := range seqs {
			t.Run(shape.Name+"/"+SequenceName(kinds), func(t *testing.T) {
				if err := d.Connect(t.TempDir()); err != nil {
					t.Fatal(err)
				}
				RunDifferential(t, d, LanceDBEngine{D: d}, shape, kinds)
			})
		}
	}
}

// brokenEngine refreshes like LanceDB but then deletes one view row behind
// its back: the differential test must catch it.
type brokenEngine struct{ LanceDBEngine }

func (e brokenEngine) Refresh(name string, full bool) (RefreshResult, error) {
	r, err := e.LanceDBEngine.Refresh(name, full)
	if err != nil {
		return r, err
	}
	s, err := e.D.Read(name, ReadOptions{})
	if err == nil && len(s.Rows) > 0 {
		_, err = e.D.Delete(name, "__source_row_id = "+s.Rows[0].Text("__source_row_id"))
	}
	return r, err
}

func TestDifferentialCatchesALostRow(t *testing.T) {
	d := StartDriver(t, t.TempDir())
	err := differential(d, brokenEngine{LanceDBEngine{D: d}}, ViewShapes("src")[1], []OpKind{Append})
	if err == nil {
		t.Fatal("a view missing a row passed the differential check")
	}
	t.Log(err)
}

func TestSelectList(t *testing.T) {
	s := ViewSpec{Select: []Projection{{Name: "id"}, {Name: "order item"}, {Name: "x`y", Expr: "a + 1"}, {Name: "shout", Expr: "upper(name)"}}}
	want := "id, `order item`, a + 1 AS `x``y`, upper(name) AS shout"
	if got := s.SelectList(); got != want {
		t.Errorf("SelectList = %q, want %q", got, want)
	}
	back, err := SplitSelect(want)
	if err != nil {
		t.Fatal(err)
	}
	for i := range back {
		if back[i] != s.Select[i] {
			t.Errorf("round trip item %d: %+v, want %+v", i, back[i], s.Select[i])
		}
	}
}
