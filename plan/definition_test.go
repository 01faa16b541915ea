package plan

import (
	"errors"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
)

func u64(n uint64) *uint64 { return &n }

// TestEncodeAsLanceDB pins the stored form LanceDB writes: sorted keys,
// compact, filter and limit omitted when absent, inputs always present.
func TestEncodeAsLanceDB(t *testing.T) {
	for _, c := range []struct {
		d    Definition
		want string
	}{
		{Definition{SourceTable: "people", Projections: []Projection{{"name", "`name`"}, {"shout", "upper(name)"}}, Filter: "age >= 18", Limit: u64(10), Inputs: []string{"age", "name"}},
			`{"filter":"age >= 18","inputs":["age","name"],"kind":"select","limit":10,"projections":[{"expression":"` + "`name`" + `","output":"name"},{"expression":"upper(name)","output":"shout"}],"source_table":"people"}`},
		{Definition{SourceTable: "t", Limit: u64(0)},
			`{"inputs":[],"kind":"select","limit":0,"projections":[],"source_table":"t"}`},
		{Definition{SourceTable: "a<b>&", Projections: []Projection{{"ü", "'<'"}}},
			`{"inputs":[],"kind":"select","projections":[{"expression":"'<'","output":"ü"}],"source_table":"a<b>&"}`},
	} {
		got, err := c.d.Encode()
		if err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Errorf("Encode:\n got %s\nwant %s", got, c.want)
		}
		back, err := Decode(got)
		if err != nil {
			t.Fatal(err)
		}
		again, _ := back.Encode()
		if again != got {
			t.Errorf("round trip: %s -> %s", got, again)
		}
	}
}

func TestDecodeErrors(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{`, "unreadable materialized view definition"},
		{`{"source_table":"t","projections":[]}`, "unreadable materialized view definition: missing kind tag"},
		{`{"kind":"select","projections":[]}`, "missing field `source_table`"},
	} {
		_, err := Decode(c.in)
		if err == nil || !strings.Contains(err.Error(), c.want) || !errors.Is(err, ErrUnreadable) {
			t.Errorf("Decode(%s): %v, want %q", c.in, err, c.want)
		}
	}
	d, err := Decode(`{"kind":"join","x":1}`)
	var ke *KindError
	if !errors.As(err, &ke) || ke.Kind != "join" || d.Kind != "join" {
		t.Errorf("unknown kind: %v", err)
	}
	// Unknown keys are ignored; missing inputs are empty.
	d, err = Decode(`{"kind":"select","source_table":"t","projections":[{"output":"a","expression":"a"}],"extra":true}`)
	if err != nil || d.Inputs == nil || len(d.Inputs) != 0 {
		t.Errorf("lenient decode: %+v %v", d, err)
	}
}

func TestParseSelect(t *testing.T) {
	got, err := ParseSelect("name, upper(name) AS shout, `order item`, id AS id2")
	if err != nil {
		t.Fatal(err)
	}
	want := []Projection{{"name", "`name`"}, {"shout", "upper(name)"}, {"order item", "`order item`"}, {"id2", "id"}}
	if len(got) != len(want) {
		t.Fatalf("%v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("item %d: %v, want %v", i, got[i], want[i])
		}
	}
	if _, err := ParseSelect("upper(name)"); err == nil || !strings.Contains(err.Error(), "needs a name") {
		t.Errorf("unaliased expression: %v", err)
	}
}

// TestCompileSchema checks the view schema LanceDB 0.39 derives: identity
// columns keep nullability and metadata (declarations stripped), computed
// ones are nullable without metadata, __source_row_id last.
func TestCompileSchema(t *testing.T) {
	md := arrow.NewMetadata([]string{"custom:k", "lance-schema:unenforced-primary-key:position"}, []string{"v", "0"})
	src := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64, Metadata: md},
		{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "__source_row_id", Type: arrow.PrimitiveTypes.Uint64},
	}, nil)
	p, err := Compile(Definition{SourceTable: "s"}, src)
	if err != nil {
		t.Fatal(err)
	}
	s := p.Schema()
	if s.NumFields() != 3 || s.Field(0).Name != "id" || s.Field(1).Name != "name" || s.Field(2).Name != SourceRowID {
		t.Fatalf("default projection: %v", s)
	}
	if s.Field(0).Nullable || !s.Field(1).Nullable || s.Field(2).Nullable {
		t.Fatalf("nullability: %v", s)
	}
	if m := s.Field(0).Metadata; m.Len() != 1 || m.Keys()[0] != "custom:k" {
		t.Fatalf("metadata of id: %v", m)
	}
	if in := p.Definition().Inputs; strings.Join(in, ",") != "__source_row_id,id,name" && strings.Join(in, ",") != "id,name" {
		t.Fatalf("inputs %v", in)
	}
	p, err = Compile(Definition{SourceTable: "s", Projections: []Projection{{"x", "id + 0"}}}, src)
	if err != nil {
		t.Fatal(err)
	}
	if f := p.Schema().Field(0); !f.Nullable || f.Metadata.Len() != 0 || f.Type.ID() != arrow.INT64 {
		t.Fatalf("computed column: %v", f)
	}
	for _, c := range []struct {
		def  Definition
		want string
	}{
		{Definition{Projections: []Projection{{"a", "id"}, {"a", "name"}}}, "Column 'a' already exists"},
		{Definition{Projections: []Projection{{"_rowid", "id"}}}, "view column name '_rowid' is reserved"},
		{Definition{Projections: []Projection{{"x", "missing"}}}, "Invalid expression for column 'x'"},
		{Definition{Projections: []Projection{{"x", "random()"}}}, "function 'random' is not immutable"},
		{Definition{Filter: "id + 1"}, "view filter must be a boolean predicate, not Int64"},
		{Definition{Filter: "id >"}, "Invalid input, invalid view filter: syntax error at position"},
		{Definition{Limit: u64(1 << 63)}, "view limit 9223372036854775808 exceeds the maximum of 9223372036854775807"},
	} {
		_, err := Compile(c.def, src)
		if err == nil || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Compile(%+v): %v, want %q", c.def, err, c.want)
		}
	}
}

func FuzzDecode(f *testing.F) {
	f.Add(`{"filter":"a > 1","inputs":["a"],"kind":"select","limit":3,"projections":[{"expression":"a","output":"a"}],"source_table":"t"}`)
	f.Add(`{"kind":"join"}`)
	f.Fuzz(func(t *testing.T, s string) {
		d, err := Decode(s)
		if err != nil {
			return
		}
		enc, err := d.Encode()
		if err != nil {
			t.Fatal(err)
		}
		d2, err := Decode(enc)
		if err != nil {
			t.Fatalf("re-decode %s: %v", enc, err)
		}
		if enc2, _ := d2.Encode(); enc2 != enc {
			t.Fatalf("unstable: %s vs %s", enc, enc2)
		}
	})
}

func TestNormalizeFilter(t *testing.T) {
	for in, want := range map[string]string{
		`"kind" = 'a' OR "kind" IS NULL`:  "`kind` = 'a' OR `kind` IS NULL",
		`"a""b" > 1 AND 'x"y' = "st"."f"`: "`a\"b` > 1 AND 'x\"y' = `st`.`f`",
		"`k` = 'it''s'":                   "`k` = 'it''s'",
		`"open`:                           `"open`,
	} {
		if got := NormalizeFilter(in); got != want {
			t.Errorf("NormalizeFilter(%s) = %s, want %s", in, got, want)
		}
	}
}

// TestCompileBlankFilter: a filter of only whitespace is LanceDB's parse
// error of an empty WHERE, not "no filter" and not mvd's own text; a
// --select that does not parse says where, without package prefixes.
func TestCompileBlankFilter(t *testing.T) {
	src := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}}, nil)
	_, err := Compile(Definition{Kind: KindSelect, SourceTable: "src", Filter: " \n "}, src)
	want := "Invalid input, invalid view filter: Invalid user input: Error parsing statement: SELECT 1 FROM t WHERE  \n  (sql parser error: Expected: an expression, found: EOF)"
	if !errors.Is(err, ErrInvalid) || err.Error() != want {
		t.Fatalf("blank filter: %q, want %q", err, want)
	}
	if _, err := ParseSelect("id +"); !errors.Is(err, ErrInvalid) || err.Error() != "syntax error at position 4: expected an expression, found end of input" {
		t.Fatalf("bad select: %v", err)
	}
}
