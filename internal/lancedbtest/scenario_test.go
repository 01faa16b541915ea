package lancedbtest

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestScenariosLanceDB runs every scenario file with LanceDB doing every
// step: the scenarios' LanceDB expectations and checks hold.
func TestScenariosLanceDB(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(ScenariosDir(t), "*.txt"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenario files: %v", err)
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".txt"), func(t *testing.T) {
			RunScenarioLanceDB(t, f)
		})
	}
}

func TestSplitSelect(t *testing.T) {
	cases := []struct {
		in   string
		want []Projection
		err  bool
	}{
		{"id", []Projection{{Name: "id"}}, false},
		{"id, upper(name) AS shout", []Projection{{Name: "id"}, {Name: "shout", Expr: "upper(name)"}}, false},
		{"`order item`, concat(a, ', as ') as `x y`", []Projection{{Name: "order item"}, {Name: "x y", Expr: "concat(a, ', as ')"}}, false},
		{"a + 1", nil, true},
		{"id,", nil, true},
		{"f(a", nil, true},
		{"'x", nil, true},
	}
	for _, c := range cases {
		got, err := SplitSelect(c.in)
		if (err != nil) != c.err {
			t.Errorf("%q: error %v", c.in, err)
			continue
		}
		if !c.err && len(got) != len(c.want) {
			t.Errorf("%q: %+v", c.in, got)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("%q: item %d = %+v, want %+v", c.in, i, got[i], c.want[i])
			}
		}
	}
}
