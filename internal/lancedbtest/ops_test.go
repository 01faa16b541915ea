package lancedbtest

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func TestSequences(t *testing.T) {
	seqs := Sequences(OpKinds, 3)
	if n := len(OpKinds); len(seqs) != n+n*n+n*n*n {
		t.Fatalf("%d sequences", len(seqs))
	}
	seen := map[string]bool{}
	for _, s := range seqs {
		name := SequenceName(s)
		if seen[name] {
			t.Fatalf("duplicate sequence %s", name)
		}
		seen[name] = true
	}
	if got := SequenceName(seqs[0]); got != "append" {
		t.Errorf("first sequence %s", got)
	}
	if got := SequenceName(seqs[len(seqs)-1]); got != "overwrite+overwrite+overwrite" {
		t.Errorf("last sequence %s", got)
	}
	a, b := SampleSequences(7, 50, 4, 6, OpKinds), SampleSequences(7, 50, 4, 6, OpKinds)
	if !reflect.DeepEqual(a, b) {
		t.Error("same seed, different samples")
	}
	if reflect.DeepEqual(a, SampleSequences(8, 50, 4, 6, OpKinds)) {
		t.Error("different seeds, same samples")
	}
	lens := map[int]bool{}
	for _, s := range a {
		if len(s) < 4 || len(s) > 6 {
			t.Fatalf("sample of length %d", len(s))
		}
		lens[len(s)] = true
	}
	if len(lens) != 3 {
		t.Errorf("lengths drawn: %v", lens)
	}
	for _, k := range OpKinds {
		if p, err := ParseOpKind(k.String()); err != nil || p != k {
			t.Errorf("ParseOpKind(%s) = %v, %v", k, p, err)
		}
	}
	if _, err := ParseOpKind("nope"); err == nil {
		t.Error("ParseOpKind(nope) succeeded")
	}
}

func TestOpsAreDeterministic(t *testing.T) {
	a, b := Ops(OpKinds), Ops(OpKinds)
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if string(ja) != string(jb) {
		t.Fatal("same kinds, different ops")
	}
	if reflect.DeepEqual(SourceRow(1, 0), SourceRow(1, 1)) {
		t.Error("variants give the same row")
	}
	// The rows meet the filters both ways and hold nulls.
	var nulls, over50, under50 int
	for _, r := range SourceRows(0, 200, 0) {
		switch a := r["amount"].(type) {
		case nil:
			nulls++
		case float64:
			if a > 50 {
				over50++
			} else {
				under50++
			}
		}
	}
	if nulls == 0 || over50 < 50 || under50 < 50 {
		t.Errorf("amount spread: %d null, %d > 50, %d ≤ 50", nulls, over50, under50)
	}
}

// TestOpsApplyAndOracle runs every op kind by LanceDB on the standard
// source under every view shape, refreshes with LanceDB and checks the
// oracle agrees with LanceDB's own views after each step.
func TestOpsApplyAndOracle(t *testing.T) {
	kinds := []OpKind{Append, UpdateAcrossFilter, Delete, MergeUpsert, UpdateUnreadColumn, Compact, MergeDeleteBySource, AddColumn, Append, Overwrite, Append}
	for _, shape := range ViewShapes("src") {
		t.Run(shape.Name, func(t *testing.T) {
			d := StartDriver(t, t.TempDir())
			must(d.CreateTable("src", SourceSchema(), SourceRows(0, InitialRows, 0)))
			for _, v := range shape.Views {
				must(d.CreateView(v.Name, v.Source, v.Spec))
			}
			refresh := func(step string) {
				var last RefreshResult
				for _, v := range shape.Views {
					last = must(d.Refresh(v.Name, RefreshOptions{}))
					if err := d.CheckView(v.Name, last.SourceVersion); err != nil {
						t.Fatalf("after %s: %v", step, err)
					}
				}
			}
			refresh("create")
			prev := must(d.Version("src"))
			for _, op := range Ops(kinds) {
				before := must(d.Read("src", ReadOptions{}))
				v, err := d.Apply("src", op)
				if err != nil {
					t.Fatalf("%s: %v", op, err)
				}
				// Every op commits one version, except that LanceDB's optimize
				// may commit more than one.
				if v != prev+1 && !(op.Kind == Compact && v > prev) {
					t.Fatalf("%s: version %d after %d", op, v, prev)
				}
				prev = v
				after := must(d.Read("src", ReadOptions{}))
				if op.Kind != Compact && reflect.DeepEqual(before.Rows, after.Rows) && len(before.Schema.Fields) == len(after.Schema.Fields) {
					t.Fatalf("%s changed nothing", op)
				}
				refresh(op.String())
				// The oracle can fail: the view no longer matches the
				// source before an update that moved rows across its filter.
				if op.Kind == UpdateAcrossFilter && (shape.Name == "identity" || shape.Name == "filtered") {
					if err := d.CheckView("v", v-1); err == nil {
						t.Fatalf("%s: view matches the source before the update too", op)
					}
				}
			}
			if n := must(d.Count("v", 0)); n == 0 {
				t.Fatal("the view ends empty: the test checks nothing")
			}
		})
	}
}

func TestCompareView(t *testing.T) {
	row := func(id, v int) Row {
		return Row{"id": json.RawMessage(fmt.Sprint(id)), "v": json.RawMessage(fmt.Sprint(v)), "__source_row_id": json.RawMessage(fmt.Sprint(id))}
	}
	want := []Row{row(1, 10), row(2, 20), row(3, 30)}
	cases := []struct {
		name  string
		got   []Row
		limit *uint64
		err   string
	}{
		{"equal", []Row{row(3, 30), row(1, 10), row(2, 20)}, nil, ""},
		{"missing", []Row{row(1, 10), row(2, 20)}, nil, "missing"},
		{"stale value", []Row{row(1, 10), row(2, 21), row(3, 30)}, nil, "unexpected"},
		{"duplicate", []Row{row(1, 10), row(1, 10), row(2, 20), row(3, 30)}, nil, "appears twice"},
		{"limit subset", []Row{row(3, 30), row(1, 10)}, Limit(2), ""},
		{"limit too few", []Row{row(3, 30)}, Limit(2), "1 rows, want 2"},
		{"limit above size", want, Limit(10), ""},
		{"limit foreign row", []Row{row(4, 40), row(1, 10)}, Limit(2), "unexpected"},
		{"limit zero", nil, Limit(0), ""},
		{"empty", nil, nil, "0 rows, want 3"},
	}
	for _, c := range cases {
		err := CompareView(c.got, want, c.limit)
		if c.err == "" && err != nil || c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
			t.Errorf("%s: %v, want %q", c.name, err, c.err)
		}
	}
}
