package scenario

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

const sample = `# every step type
source create src ids=0..2,5 variant=1 no-stable-row-ids
{"id": 9007199254740993, "name": "x y", "amount": 1.5}
----
version=1

source append src ids=7
----
version=2

source delete src
where: id % 2 = 1
----
version=3

source update src
set: amount = 100 - amount
set: name = 'a: b'
where: id = 3
----
version=4

source upsert src ids=1..2 variant=4
----
version=5

source delete-by-source src keep=1,3..4
----
version=6

source compact src cleanup
----
version=8

source add-column src
column: doubled = score * 2
----
version=9

source drop-column src name=doubled
----
version=10

source overwrite src
----
version=11

source restore src version=2
----
version=12

source index src column=id type=bitmap
----
version=13

source drop src
----
ok

view create v source=src
select: id, upper(name) AS shout
where: amount > 50
limit: 4
----
ok

lancedb view create w "source=my src"
----
error: Table 'my src' was not found

view drop v if-exists
----
ok

view list
----
(none)

view show v
----
{"sourceTable":"src"}

refresh v full cascade source_version=7
----
mode=rebuild rows_written=3
lancedb: mode=rebuild rows_written=4

check v
----
ok

count v
----
rows=3
`

func TestParseEveryStep(t *testing.T) {
	f, err := Parse("sample", []byte(sample))
	if err != nil {
		t.Fatal(err)
	}
	sel, where, lim, sv := "id, upper(name) AS shout", "amount > 50", uint64(4), uint64(7)
	want := []Op{
		SourceCreate{Table: "src", Rows: Rows{IDs: []int64{0, 1, 2, 5}, Variant: 1, JSON: []map[string]any{nil}}, NoStableRowIDs: true},
		SourceAppend{Table: "src", Rows: Rows{IDs: []int64{7}}},
		SourceDelete{Table: "src", Where: "id % 2 = 1"},
		SourceUpdate{Table: "src", Set: [][2]string{{"amount", "100 - amount"}, {"name", "'a: b'"}}, Where: "id = 3"},
		SourceUpsert{Table: "src", Rows: Rows{IDs: []int64{1, 2}, Variant: 4}},
		SourceDeleteBySource{Table: "src", Keep: []int64{1, 3, 4}},
		SourceCompact{Table: "src", Cleanup: true},
		SourceAddColumn{Table: "src", Name: "doubled", SQL: "score * 2"},
		SourceDropColumn{Table: "src", Name: "doubled"},
		SourceOverwrite{Table: "src"},
		SourceRestore{Table: "src", Version: 2},
		SourceIndex{Table: "src", Column: "id", Type: "bitmap"},
		SourceDrop{Table: "src"},
		ViewCreate{Name: "v", Source: "src", Select: &sel, Where: &where, Limit: &lim},
		ViewCreate{Name: "w", Source: "my src"},
		ViewDrop{Name: "v", IfExists: true},
		ViewList{},
		ViewShow{Name: "v"},
		Refresh{Name: "v", Full: true, Cascade: true, SourceVersion: &sv},
		Check{Name: "v"},
		Count{Name: "v"},
	}
	if len(f.Steps) != len(want) {
		t.Fatalf("%d steps, want %d", len(f.Steps), len(want))
	}
	for i, s := range f.Steps {
		got := s.Op
		if c, ok := got.(SourceCreate); ok {
			// The JSON row is checked below; compare the rest.
			if len(c.Rows.JSON) != 1 || c.Rows.JSON[0]["id"].(interface{ String() string }).String() != "9007199254740993" || c.Rows.JSON[0]["name"] != "x y" {
				t.Errorf("create rows %+v", c.Rows.JSON)
			}
			c.Rows.JSON = []map[string]any{nil}
			got = c
		}
		if !reflect.DeepEqual(got, want[i]) {
			t.Errorf("step %d (%s): %#v, want %#v", i, s.Line, got, want[i])
		}
	}
	if f.Steps[0].Pos.Line != 2 || f.Steps[0].Pos.String() != "sample:2" {
		t.Errorf("pos %v", f.Steps[0].Pos)
	}
	if !IsSource(f.Steps[0].Op) || IsSource(f.Steps[13].Op) {
		t.Error("IsSource")
	}
	if f.Steps[14].Engine != LanceDB || f.Steps[14].Want.Err != "Table 'my src' was not found" {
		t.Errorf("lancedb step %+v", f.Steps[14])
	}
	r := f.Steps[18]
	if v, _ := r.Want.Field("rows_written"); v != "3" || r.WantLanceDB == nil || r.ForLanceDB().Lines[0] != "mode=rebuild rows_written=4" {
		t.Errorf("refresh expectations %+v", r)
	}
}

func TestForLanceDBDropsRefreshVersion(t *testing.T) {
	f, err := Parse("x", []byte("refresh v\n----\nmode=no_op version=3\n\nsource compact s\n----\nversion=3\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := f.Steps[0].ForLanceDB(); len(got.Fields) != 1 || got.Lines[0] != "mode=no_op" {
		t.Errorf("refresh for LanceDB: %+v", got)
	}
	if got := f.Steps[1].ForLanceDB(); got.Lines[0] != "version=3" {
		t.Errorf("source step for LanceDB: %+v", got)
	}
}

func TestParseErrors(t *testing.T) {
	cases := []struct{ src, err string }{
		{"view list\n", "no \"----\" line"},
		{"view list\n\n----\nok\n", "blank line before"},
		{"view list\n----\n", "no expected output"},
		{"frobnicate x\n----\nok\n", "unknown command"},
		{"source zap t\n----\nok\n", "unknown source verb"},
		{"view zap t\n----\nok\n", "unknown view verb"},
		{"source\n----\nok\n", "missing verb"},
		{"source compact\n----\nok\n", "missing table name"},
		{"source compact t extra\n----\nok\n", "unexpected word"},
		{"source compact t k=v\n----\nok\n", "unknown argument \"k\""},
		{"source append t\n----\nok\n", "no rows"},
		{"source append t ids=5..3\n----\nok\n", "empty range"},
		{"source append t ids=x\n----\nok\n", "not an id"},
		{"source append t ids=0..99999999999\n----\nok\n", "more than"},
		{"source append t ids=-9223372036854775808..9223372036854775807\n----\nok\n", "more than"},
		{"source append t ids=1\nnot json\n----\nok\n", "unexpected input line"},
		{"source append t\n{\"id\": \n----\nok\n", "row"},
		{"source append t\n{\"id\": 1} {}\n----\nok\n", "text after the object"},
		{"source delete t\n----\nok\n", "missing where"},
		{"source update t\nwhere: x\n----\nok\n", "no set"},
		{"source update t\nset: x\n----\nok\n", "want `column = SQL`"},
		{"source add-column t\ncolumn: x\n----\nok\n", "want `NAME = SQL`"},
		{"source restore t\n----\nok\n", "missing version"},
		{"source index t\n----\nok\n", "missing column"},
		{"source restore t version=-1\n----\nok\n", "not a non-negative integer"},
		{"lancedb source compact t\n----\nok\n", "always LanceDB's"},
		{"view create v\n----\nok\n", "missing source"},
		{"view create v source=s\nlimit: 1.5\n----\nok\n", "not a non-negative integer"},
		{"view create v source=s\nbogus line\n----\nok\n", "unexpected input line"},
		{"refresh\n----\nok\n", "missing view name"},
		{"refresh v source_version=x\n----\nok\n", "not a non-negative integer"},
		{"check v\n----\nerror: a\nerror: b\n", "one line"},
		{"check v\n----\nerror:\n", "no text"},
		{"view list \"x\n----\nok\n", "bad quoted string"},
		{"lancedb\n----\nok\n", "empty directive"},
		{"view list\x00\n----\nok\n", "NUL"},
	}
	for _, c := range cases {
		_, err := Parse("e", []byte(c.src))
		if err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%q: error %v, want %q", c.src, err, c.err)
		}
	}
}

func TestMatch(t *testing.T) {
	exp := func(lines ...string) Expect {
		e, err := newExpect(lines)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	boom := errors.New("lance error: boom at 3")
	cases := []struct {
		e    Expect
		out  string
		err  error
		fail bool
	}{
		{exp("mode=incremental"), FormatRefresh("incremental", 3, 2, 1), nil, false},
		{exp("mode=incremental rows_written=2"), FormatRefresh("incremental", 3, 2, 1), nil, true},
		{exp("mode=incremental"), "", boom, true},
		{exp("mode=* version=3"), FormatRefresh("no_op", 0, 2, 3), nil, false},
		{exp("mode=incremental version=*"), "mode=incremental", nil, true},
		{exp("mode=incremental"), "garbage", nil, true},
		{exp("error: boom"), "", boom, false},
		{exp("error: bang"), "", boom, true},
		{exp("error: boom"), "ok", nil, true},
		{exp("ok"), "ok\n", nil, false},
		{exp("ok"), "okay", nil, true},
		{exp("a", "b"), "a\nb", nil, false},
		{exp(`{"a":1,"b":[2]}`), `{"b":[2], "a":1}`, nil, false},
		{exp(`{"a":1}`), `{"a":2}`, nil, true},
		{exp(`{"a":1}`), `{"a":1,"watermark":{"source_version":3}}`, nil, false},
		{exp(`{"a":1,"b":2}`), `{"a":1}`, nil, true},
		{exp(`{"a":{"x":1}}`), `{"a":{"x":1,"y":2}}`, nil, true},
		{exp(`{"a":1}`), `not json`, nil, true},
	}
	for i, c := range cases {
		if err := c.e.Match(c.out, c.err); (err != nil) != c.fail {
			t.Errorf("case %d (%v vs %q, %v): %v", i, c.e.Lines, c.out, c.err, err)
		}
	}
}

func TestScenarioFilesParse(t *testing.T) {
	files, _ := filepath.Glob("../../testdata/scenarios/*.txt")
	if len(files) == 0 {
		t.Fatal("no scenario files")
	}
	for _, p := range files {
		f, err := ParseFile(p)
		if err != nil {
			t.Error(err)
			continue
		}
		if len(f.Steps) == 0 {
			t.Errorf("%s: no steps", p)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(sample))
	files, _ := filepath.Glob("../../testdata/scenarios/*.txt")
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("source append t ids=1..3,\"7\"\n{\"id\": 1e400}\n----\nversion=1\nlancedb: error: x\n"))
	f.Fuzz(func(t *testing.T, src []byte) {
		file, err := Parse("fuzz", src)
		if err != nil {
			return
		}
		lines := strings.Count(string(src), "\n") + 1
		again, err := Parse("fuzz", src)
		if err != nil || len(again.Steps) != len(file.Steps) {
			t.Fatalf("parse is not deterministic: %v", err)
		}
		prev := 0
		for _, s := range file.Steps {
			if s.Pos.Line <= prev || s.Pos.Line > lines {
				t.Fatalf("step at line %d after %d of %d", s.Pos.Line, prev, lines)
			}
			prev = s.Pos.Line
			if s.Op == nil || len(s.Want.Lines) == 0 {
				t.Fatalf("step %q without op or expectation", s.Line)
			}
			_ = s.ForLanceDB().Match("", nil)
			if r, ok := s.Op.(SourceAppend); ok && r.Rows.Len() == 0 {
				t.Fatal("append without rows")
			}
		}
	})
}
