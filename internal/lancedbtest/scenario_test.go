package lancedbtest

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/mvd-project/mvd/internal/scenario"
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

// wrongEngine is LanceDB that reports every refresh as a no-op: the
// scenario runner must notice.
type wrongEngine struct{ *Driver }

func (w wrongEngine) ViewStep(op scenario.Op) (string, error) {
	out, err := w.Driver.ViewStep(op)
	if _, ok := op.(scenario.Refresh); ok && err == nil {
		out = strings.Replace(out, "mode=rebuild", "mode=no_op", 1)
	}
	return out, err
}

func TestRunScenarioCatchesAWrongMode(t *testing.T) {
	d := StartDriver(t, t.TempDir())
	fails, err := ScenarioFailures(filepath.Join(ScenariosDir(t), "basics.txt"), d, wrongEngine{d})
	if err != nil {
		t.Fatal(err)
	}
	// wrongEngine is not a *Driver, so it is held to mvd's expectations:
	// the two rebuilds it misreports fail, and so do LanceDB's two view
	// versions per refresh.
	if len(fails) == 0 {
		t.Fatal("a wrong refresh mode passed the scenario")
	}
	found := false
	for _, f := range fails {
		found = found || strings.Contains(f.Error(), `mode="no_op", want "rebuild"`)
	}
	if !found {
		t.Errorf("no failure names the wrong mode: %v", fails)
	}
}
