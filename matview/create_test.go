package matview

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/mvd-project/mvd/internal/lancedbtest"
	"github.com/mvd-project/mvd/plan"
)

// TestCreateValidationsMatchLanceDB creates bad views with LanceDB and with
// mvd: both refuse, with the same message (its stable part: LanceDB embeds
// DataFusion's and sqlparser's own wording after it), the same kind of
// error, and neither leaves a table behind.
func TestCreateValidationsMatchLanceDB(t *testing.T) {
	lancedbtest.Require(t)
	ctx := context.Background()
	dir := t.TempDir()
	d := lancedbtest.StartDriver(t, dir)
	must[uint64](t)(d.CreateTable("src", lancedbtest.SourceSchema(), lancedbtest.SourceRows(0, 10, 0)))
	must[uint64](t)(d.CreateTableWith("plain", lancedbtest.SourceSchema(), lancedbtest.SourceRows(0, 3, 0), lancedbtest.CreateOptions{NoStableRowIDs: true}))
	db := openDB(t, dir)
	p := func(out, expr string) lancedbtest.Projection { return lancedbtest.Projection{Name: out, Expr: expr} }
	cases := []struct {
		name   string
		source string
		spec   lancedbtest.ViewSpec
		kind   error
		msg    string // in both messages
	}{
		{"unknown source", "nope", lancedbtest.ViewSpec{}, ErrNotFound, "Table 'nope' was not found"},
		{"no stable row ids", "plain", lancedbtest.ViewSpec{}, ErrInvalid, "materialized views require stable row ids on the source table; create 'plain' with storage option new_table_enable_stable_row_ids=true"},
		{"unknown column", "src", lancedbtest.ViewSpec{Select: []lancedbtest.Projection{p("x", "missing + 1")}}, ErrInvalid, "Invalid expression for column 'x'"},
		{"unknown filter column", "src", lancedbtest.ViewSpec{Where: "missing > 1"}, ErrInvalid, "Invalid input, invalid view filter"},
		{"non-boolean filter", "src", lancedbtest.ViewSpec{Where: "score + 1"}, ErrInvalid, "view filter must be a boolean predicate, not Int32"},
		{"syntax error", "src", lancedbtest.ViewSpec{Where: "score >>> 3"}, ErrInvalid, "Invalid input, invalid view filter"},
		{"volatile", "src", lancedbtest.ViewSpec{Select: []lancedbtest.Projection{p("t", "now()")}}, ErrInvalid, "function 'now' is not immutable and would evaluate differently across refreshes"},
		{"volatile filter", "src", lancedbtest.ViewSpec{Where: "random() > 0.5"}, ErrInvalid, "function 'random' is not immutable"},
		{"duplicate output", "src", lancedbtest.ViewSpec{Select: []lancedbtest.Projection{{Name: "id"}, p("id", "score")}}, ErrInvalid, "Column 'id' already exists"},
		{"reserved output", "src", lancedbtest.ViewSpec{Select: []lancedbtest.Projection{p("__source_row_id", "id")}}, ErrInvalid, "view column name '__source_row_id' is reserved"},
		{"reserved _rowid", "src", lancedbtest.ViewSpec{Select: []lancedbtest.Projection{p("_rowid", "id")}}, ErrInvalid, "view column name '_rowid' is reserved"},
		{"name taken", "src", lancedbtest.ViewSpec{}, ErrExists, "Table 'src' already exists"},
		{"limit too large", "src", lancedbtest.ViewSpec{Limit: lancedbtest.Limit(1 << 63)}, ErrInvalid, "view limit 9223372036854775808 exceeds the maximum of 9223372036854775807"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			name := "bad_" + strings.ReplaceAll(c.name, " ", "_")
			if c.name == "name taken" {
				name = "src"
			}
			before := must[[]string](t)(d.TableNames())
			_, lerr := d.CreateView(name, c.source, c.spec)
			if lerr == nil {
				t.Fatalf("LanceDB accepted it")
			}
			if c.name != "limit too large" && !strings.Contains(lancedbtest.Message(lerr), c.msg) {
				t.Fatalf("LanceDB says %q, not %q", lancedbtest.Message(lerr), c.msg)
			}
			_, err := db.CreateView(ctx, name, c.source, toDefinition(c.spec))
			if err == nil {
				t.Fatal("mvd accepted it")
			}
			if !errors.Is(err, c.kind) || !strings.Contains(err.Error(), c.msg) {
				t.Fatalf("mvd says %q (%v), want %q (%v)", err, err, c.msg, c.kind)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("a multi-line error: %q", err)
			}
			if after := must[[]string](t)(d.TableNames()); !slices.Equal(before, after) {
				t.Fatalf("tables %v after a failed create, %v before", after, before)
			}
		})
	}
	// mvd refuses what LanceDB refuses at refresh, and accepts the standard
	// SQL LanceDB refuses.
	sel := must[[]plan.Projection](t)(plan.ParseSelect("id, CASE WHEN score > 500 THEN 'hi' ELSE 'lo' END AS band, substr(name, 1, 2) AS pre"))
	v := must[*View](t)(db.CreateView(ctx, "ext", "src", Definition{Select: sel, Where: "floor(amount) > 10"}))
	must[*Result](t)(v.Refresh(ctx, RefreshOptions{}))
	checkView(t, db, "ext")
	// Plain tables are not views.
	if _, err := db.OpenView(context.Background(), "src"); !errors.Is(err, ErrNotAView) || err.Error() != "Table 'src' is not a materialized view" {
		t.Fatalf("open a plain table as a view: %v", err)
	}
	if _, err := Open("db://host/x"); !errors.Is(err, ErrUnsupported) || err.Error() != "database db://host/x: materialized views are supported on local databases and s3:// only" {
		t.Fatalf("remote database: %v", err)
	}
}
