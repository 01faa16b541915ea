package matview

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/mvd-project/mvd/internal/lancedbtest"
)

func must[T any](t *testing.T) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

// interopSpecs are view specs created by both mvd and LanceDB.
var interopSpecs = map[string]lancedbtest.ViewSpec{
	"all": {},
	"proj": {Select: []lancedbtest.Projection{{Name: "id"}, {Name: "name"}, {Name: "shout", Expr: "upper(name)"},
		{Name: "cents", Expr: "amount * 100"}, {Name: "n_tags", Expr: "array_length(tags)"}, {Name: "tags"}},
		Where: "kind IN ('a', 'b') AND amount > 20"},
	"quotes": {Select: []lancedbtest.Projection{{Name: "id"}, {Name: "s", Expr: `"lit"`}}, Where: `"kind" = 'a' OR "kind" IS NULL`},
	"capped": {Select: []lancedbtest.Projection{{Name: "id"}, {Name: "score"}}, Where: "score >= 0", Limit: lancedbtest.Limit(5)},
}

// TestInteropMvdViewInLanceDB: a view created and refreshed by mvd opens in
// LanceDB with the same definition() and schema as LanceDB's own view of
// the same spec, reads right, and LanceDB's refresh is no_op right after
// mvd's and incremental after a source append; mvd then adopts LanceDB's
// refresh.
func TestInteropMvdViewInLanceDB(t *testing.T) {
	lancedbtest.Require(t)
	ctx := context.Background()
	dir := t.TempDir()
	d := lancedbtest.StartDriver(t, dir)
	must[uint64](t)(d.CreateTable("src", lancedbtest.SourceSchema(), lancedbtest.SourceRows(0, 40, 0)))
	db := openDB(t, dir)
	for name, spec := range interopSpecs {
		t.Run(name, func(t *testing.T) {
			mv, twin := "mvd_"+name, "ldb_"+name
			v := must[*View](t)(db.CreateView(ctx, mv, "src", toDefinition(spec)))
			want := must[lancedbtest.Definition](t)(d.CreateView(twin, "src", spec))
			got := must[lancedbtest.Definition](t)(d.ViewDefinition(mv))
			want.SourceTable, got.SourceTable = "", ""
			if !reflect.DeepEqual(got, want) {
				g, _ := json.Marshal(got)
				w, _ := json.Marshal(want)
				t.Fatalf("definition() of mvd's view:\n got %s\nwant %s", g, w)
			}
			gs := must[any](t)(schemaOf(d, mv))
			ws := must[any](t)(schemaOf(d, twin))
			if !reflect.DeepEqual(gs, ws) {
				g, _ := json.Marshal(gs)
				w, _ := json.Marshal(ws)
				t.Fatalf("schema of mvd's view:\n got %s\nwant %s", g, w)
			}
			r := must[*Result](t)(v.Refresh(ctx, RefreshOptions{}))
			if r.Mode != ModeRebuild || r.Version != 2 {
				t.Fatalf("first refresh: %+v", r)
			}
			if err := d.CheckView(mv, r.SourceVersion); err != nil {
				t.Fatal(err)
			}
			lr := must[lancedbtest.RefreshResult](t)(d.Refresh(mv, lancedbtest.RefreshOptions{}))
			if lr.Mode != "no_op" || lr.Version != r.Version {
				t.Fatalf("LanceDB refresh right after mvd's: %+v, want no_op at %d", lr, r.Version)
			}
		})
	}
	ver := must[uint64](t)(d.Add("src", lancedbtest.SourceRows(40, 45, 0)))
	for name := range interopSpecs {
		mv := "mvd_" + name
		lr := must[lancedbtest.RefreshResult](t)(d.Refresh(mv, lancedbtest.RefreshOptions{}))
		if lr.Mode != "incremental" || lr.SourceVersion != ver {
			t.Fatalf("%s: LanceDB refresh after an append: %+v", mv, lr)
		}
		v := must[*View](t)(db.OpenView(context.Background(), mv))
		r := must[*Result](t)(v.Refresh(ctx, RefreshOptions{}))
		if r.Mode != ModeNoOp || r.Version != lr.Version {
			t.Fatalf("%s: mvd refresh after LanceDB's: %+v, want no_op at %d", mv, r, lr.Version)
		}
	}
	// An update by LanceDB, refreshed by mvd over LanceDB's stamp.
	must[lancedbtest.UpdateResult](t)(d.Update("src", "id % 4 = 1", map[string]string{"amount": "100 - amount", "score": "score + 7"}))
	for name := range interopSpecs {
		mv := "mvd_" + name
		v := must[*View](t)(db.OpenView(context.Background(), mv))
		r := must[*Result](t)(v.Refresh(ctx, RefreshOptions{}))
		if r.Mode != ModeIncremental {
			t.Fatalf("%s: mvd refresh after an update: %+v", mv, r)
		}
		if err := d.CheckView(mv, r.SourceVersion); err != nil {
			t.Fatal(err)
		}
		lr := must[lancedbtest.RefreshResult](t)(d.Refresh(mv, lancedbtest.RefreshOptions{}))
		if lr.Mode != "no_op" {
			t.Fatalf("%s: LanceDB refresh after mvd's: %+v", mv, lr)
		}
	}
	// Deletes of rows the selective view does not hold: mvd's refreshes
	// move its watermark alone, soon from commits built ahead
	// (StagePrebuilt). LanceDB reads the view, and refreshes it over them:
	// no_op, then incremental after an append.
	mv := "mvd_proj"
	v := must[*View](t)(db.OpenView(context.Background(), mv))
	for lo := 0; lo < 40; lo += 10 {
		must[uint64](t)(d.Delete("src", fmt.Sprintf("NOT (kind IN ('a', 'b') AND amount > 20) AND id >= %d AND id < %d", lo, lo+10)))
		r := must[*Result](t)(v.Refresh(ctx, RefreshOptions{}))
		if r.RowsWritten != 0 || r.Mode == ModeRebuild {
			t.Fatalf("%s: refresh after a delete of rows it does not hold: %+v", mv, r)
		}
	}
	if v.prebuilt == 0 {
		t.Fatalf("%s: no watermark commit was staged from one built ahead (%d speculations published)", mv, v.speculated)
	}
	r := must[*Result](t)(v.Refresh(ctx, RefreshOptions{}))
	if err := d.CheckView(mv, r.SourceVersion); err != nil {
		t.Fatal(err)
	}
	if lr := must[lancedbtest.RefreshResult](t)(d.Refresh(mv, lancedbtest.RefreshOptions{})); lr.Mode != "no_op" || lr.Version != r.Version {
		t.Fatalf("%s: LanceDB refresh after mvd's watermark commits: %+v, want no_op at %d", mv, lr, r.Version)
	}
	ver = must[uint64](t)(d.Add("src", lancedbtest.SourceRows(45, 60, 0)))
	if lr := must[lancedbtest.RefreshResult](t)(d.Refresh(mv, lancedbtest.RefreshOptions{})); lr.Mode != "incremental" || lr.SourceVersion != ver {
		t.Fatalf("%s: LanceDB refresh after an append, over mvd's watermark commits: %+v", mv, lr)
	}
	if err := d.CheckView(mv, ver); err != nil {
		t.Fatal(err)
	}
}

// schemaOf is a view's schema as LanceDB reads it, without the mv.* keys
// that differ between two views (incarnation, watermark).
func schemaOf(d *lancedbtest.Driver, view string) (any, error) {
	s, err := d.Schema(view, 0)
	if err != nil {
		return nil, err
	}
	md := map[string]string{}
	for k, v := range s.Metadata {
		if !strings.HasPrefix(k, "mv.") {
			md[k] = v
		}
	}
	return []any{s.Fields, md}, nil
}

// TestInteropLanceDBViewInMvd: views created and refreshed by LanceDB are
// listed, shown and refreshed by mvd — incrementally, since LanceDB left
// them intact — and LanceDB's next refresh is no_op.
func TestInteropLanceDBViewInMvd(t *testing.T) {
	lancedbtest.Require(t)
	ctx := context.Background()
	dir := t.TempDir()
	d := lancedbtest.StartDriver(t, dir)
	must[uint64](t)(d.CreateTable("src", lancedbtest.SourceSchema(), lancedbtest.SourceRows(0, 40, 0)))
	var names []string
	for name, spec := range interopSpecs {
		must[lancedbtest.Definition](t)(d.CreateView(name, "src", spec))
		must[lancedbtest.RefreshResult](t)(d.Refresh(name, lancedbtest.RefreshOptions{}))
		names = append(names, name)
	}
	slices.Sort(names)
	db := openDB(t, dir)
	list := must[[]ViewEntry](t)(db.ListViews(context.Background()))
	var listed []string
	for _, e := range list {
		if e.Err != nil {
			t.Fatalf("list: %s: %v", e.Name, e.Err)
		}
		listed = append(listed, e.Name)
	}
	if !slices.Equal(listed, names) {
		t.Fatalf("listed %v, want %v", listed, names)
	}
	must[uint64](t)(d.Add("src", lancedbtest.SourceRows(40, 46, 0)))
	must[uint64](t)(d.Delete("src", "id % 5 = 0"))
	for _, name := range names {
		v := must[*View](t)(db.OpenView(context.Background(), name))
		info := must[*Info](t)(v.Info(context.Background()))
		ld := must[lancedbtest.Definition](t)(d.ViewDefinition(name))
		if info.Definition.SourceTable != ld.SourceTable || len(info.Definition.Projections) != len(ld.Projections) || !info.Watermark.Valid {
			t.Fatalf("%s: show %+v, LanceDB %+v", name, info, ld)
		}
		r := must[*Result](t)(v.Refresh(ctx, RefreshOptions{}))
		if r.Mode != ModeIncremental {
			t.Fatalf("%s: mvd refresh of LanceDB's view: %+v (%s)", name, r, r.Reason)
		}
		if err := d.CheckView(name, r.SourceVersion); err != nil {
			t.Fatal(err)
		}
		lr := must[lancedbtest.RefreshResult](t)(d.Refresh(name, lancedbtest.RefreshOptions{}))
		if lr.Mode != "no_op" {
			t.Fatalf("%s: LanceDB refresh after mvd's: %+v", name, lr)
		}
	}
}
