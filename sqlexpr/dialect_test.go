package sqlexpr

import (
	"errors"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
)

// TestDialectsReadDoubleQuotes pins how each entry point reads double
// quotes (lancedb-mv-semantics.md §6.1), and that a tree parsed with one
// dialect cannot be compiled as the other.
func TestDialectsReadDoubleQuotes(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "Mixed", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "st", Type: arrow.StructOf(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int32, Nullable: true}), Nullable: true},
	}, nil)
	cases := []struct {
		src     string
		filter  bool
		want    string // printed tree, or "" when refused
		inputs  string
		errKind error
	}{
		{src: `"name" = 'Bob'`, filter: true, want: `("name" = 'Bob')`, inputs: "name"},
		{src: `"name" = 'Bob'`, want: `("name" = 'Bob')`, inputs: ""},
		{src: `name = "Bob"`, filter: true, errKind: ErrUnknownColumn},
		{src: `name = "Bob"`, want: `(name = "Bob")`, inputs: "name"},
		{src: `"Mixed" > 1`, filter: true, want: `("Mixed" > 1)`, inputs: "Mixed"},
		{src: `"mixed" > 1`, filter: true, errKind: ErrUnknownColumn},
		{src: "`mixed` > 1", filter: true, errKind: ErrUnknownColumn},
		{src: "`mixed` > 1", errKind: ErrUnknownColumn},
		{src: `mixed > 1`, filter: true, want: `(mixed > 1)`, inputs: "Mixed"},
		{src: `"st"."a" > 1`, filter: true, want: `("st"."a" > 1)`, inputs: "st.a"},
		{src: `st."a" > 1`, filter: true, want: `(st."a" > 1)`, inputs: "st.a"},
		{src: `st."a" > 1`, errKind: ErrSyntax},
		{src: `"st"."A" > 1`, filter: true, errKind: ErrUnknownColumn},
		{src: `"Mixed" + 1`, errKind: ErrType},
		{src: `"na""me" = 'x'`, filter: true, errKind: ErrUnknownColumn},
		{src: `"a""b" = name`, want: `("a""b" = name)`, inputs: "name"},
	}
	for _, c := range cases {
		compileFn, what := CompileProjection, "projection"
		if c.filter {
			compileFn, what = CompileFilter, "filter"
		}
		got, err := compileFn(c.src, schema)
		if c.errKind != nil {
			if !errors.Is(err, c.errKind) {
				t.Errorf("%s %s: error %v, want %v", what, c.src, err, c.errKind)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s %s: %v", what, c.src, err)
			continue
		}
		if s := got.Expr().String(); s != c.want {
			t.Errorf("%s %s: parsed as %s, want %s", what, c.src, s, c.want)
		}
		if in := strings.Join(got.Inputs(), ","); in != c.inputs {
			t.Errorf("%s %s: inputs %q, want %q", what, c.src, in, c.inputs)
		}
	}

	// Trees carry their dialect: the other compile entry point refuses.
	f, err := ParseFilter(`"name" = 'Bob'`)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Compile(f, schema); !errors.Is(err, ErrSyntax) {
		t.Errorf("Compile(filter tree): %v, want ErrSyntax", err)
	}
	if _, err := CompileFilterExpr(f, schema); err != nil {
		t.Errorf("CompileFilterExpr(filter tree): %v", err)
	}
	p, err := ParseProjection(`name = "Bob"`)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := CompileFilterExpr(p, schema); !errors.Is(err, ErrSyntax) {
		t.Errorf("CompileFilterExpr(projection tree): %v, want ErrSyntax", err)
	}
	if _, err := Compile(p, schema); err != nil {
		t.Errorf("Compile(projection tree): %v", err)
	}

	// A statement reads its select list as projections, its WHERE as a filter.
	st, err := ParseStatement(`CREATE MATERIALIZED VIEW v AS SELECT "name" AS lit, name FROM t WHERE "name" = 'Bob'`)
	if err != nil {
		t.Fatal(err)
	}
	cv := st.(*CreateView)
	if _, err := Compile(cv.Projections[0].Expr, schema); err != nil {
		t.Errorf("projection of a statement: %v", err)
	}
	if lit, ok := cv.Projections[0].Expr.(*Literal); !ok || lit.Text != "name" {
		t.Errorf(`"name" in a select list is %#v, want the string 'name'`, cv.Projections[0].Expr)
	}
	fc, err := CompileFilterExpr(cv.Filter, schema)
	if err != nil {
		t.Fatalf("filter of a statement: %v", err)
	}
	if in := fc.Inputs(); len(in) != 1 || in[0] != "name" {
		t.Errorf("filter of a statement reads %q, want [name]", in)
	}
}

// TestRowIDFilters checks that _rowid is a column only for query filters
// that ask for it, as in LanceDB (a view refuses it).
func TestRowIDFilters(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}}, nil)
	if _, err := CompileFilter("_rowid < 3", schema); !errors.Is(err, ErrUnknownColumn) || !strings.Contains(err.Error(), "unknown column '_rowid'") {
		t.Errorf("view-style filter on _rowid: %v", err)
	}
	f, err := CompileFilterWithRowIDs("_rowid < 3 AND id > 0", schema)
	if err != nil {
		t.Fatal(err)
	}
	if !f.ReadsRowIDs() {
		t.Error("ReadsRowIDs = false for a filter on _rowid")
	}
	g, err := CompileFilterWithRowIDs("id > 0", schema)
	if err != nil {
		t.Fatal(err)
	}
	if g.ReadsRowIDs() {
		t.Error("ReadsRowIDs = true for a filter without _rowid")
	}
	if _, err := CompileFilterWithRowIDs("_rowid < -1", schema); !errors.Is(err, ErrType) {
		t.Errorf("_rowid against a negative literal: %v, want ErrType (UInt64 row ids)", err)
	}
}
