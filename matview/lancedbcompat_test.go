package matview

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/mvd-project/mvd/internal/lancedbtest"
	"github.com/mvd-project/mvd/plan"
)

// TestLanceDBCannotRefreshExtensions: a view mvd creates with SQL that
// LanceDB 0.39 cannot plan (CASE, …) is refreshed by mvd, while LanceDB's
// own refresh of it fails ("not supported SQL in lance"), which is why
// plan.LanceDBUnsupported warns about it; with LanceDBCompatible the
// create is refused and nothing is left.
func TestLanceDBCannotRefreshExtensions(t *testing.T) {
	lancedbtest.Require(t)
	ctx := context.Background()
	dir := t.TempDir()
	d := lancedbtest.StartDriver(t, dir)
	must[uint64](t)(d.CreateTable("src", lancedbtest.SourceSchema(), lancedbtest.SourceRows(0, 40, 0)))
	db := openDB(t, dir)
	cases := map[string]struct {
		def  Definition
		want string // in LanceDB's refresh error
	}{
		"case": {Definition{Select: []plan.Projection{{Output: "id", Expression: "`id`"}, {Output: "band", Expression: "CASE WHEN score > 500 THEN 'hi' ELSE 'lo' END"}}}, "is not supported SQL in lance"},
		"ceil": {Definition{Where: "ceil(amount) > 10"}, "is not supported SQL in lance"},
		"trim": {Definition{Select: []plan.Projection{{Output: "n", Expression: "TRIM(name)"}}}, "is not supported SQL in lance"},
		"cast": {Definition{Where: "CAST(id AS VARCHAR) LIKE '1%'"}, "Unsupported data type"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			if _, err := db.CreateView(ctx, "strict_"+name, "src", c.def, LanceDBCompatible()); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "LanceDB 0.39 cannot plan") || db.exists("strict_"+name) {
				t.Fatalf("LanceDBCompatible create: %v (left behind: %v)", err, db.exists("strict_"+name))
			}
			v := must[*View](t)(db.CreateView(ctx, "mv_"+name, "src", c.def))
			info := must[*Info](t)(v.Info(ctx))
			if len(plan.LanceDBUnsupported(*info.Definition)) == 0 {
				t.Fatalf("no warning for %+v", info.Definition)
			}
			r := must[*Result](t)(v.Refresh(ctx, RefreshOptions{}))
			if r.Mode != ModeRebuild {
				t.Fatalf("mvd refresh: %+v", r)
			}
			_, err := d.Refresh("mv_"+name, lancedbtest.RefreshOptions{Full: true})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("LanceDB's refresh of the view: %v, want it to fail with %q", err, c.want)
			}
		})
	}
}
