package lancedbtest

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mvd-project/mvd/arrowjson"
)

// must returns v, or panics on err: Go cannot pass (v, err) plus t to one
// helper, and a panic fails the test with the error.
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// typesSchema exercises every value kind the driver converts.
var typesSchema = arrowjson.Schema{Fields: []arrowjson.Field{
	{Name: "id", Type: "int64"},
	{Name: "u", Type: "uint64", Nullable: true},
	{Name: "i32", Type: "int32", Nullable: true},
	{Name: "f", Type: "float64", Nullable: true},
	{Name: "f32", Type: "float32", Nullable: true},
	{Name: "b", Type: "bool", Nullable: true},
	{Name: "s", Type: "utf8", Nullable: true},
	{Name: "bin", Type: "binary", Nullable: true},
	{Name: "d", Type: "date32", Nullable: true},
	{Name: "ts", Type: "timestamp[us]", Nullable: true},
	{Name: "tsn", Type: "timestamp[ns, tz=UTC]", Nullable: true},
	{Name: "tags", Type: "list", Nullable: true, Children: []arrowjson.Field{{Name: "item", Type: "utf8", Nullable: true}}},
	{Name: "vec", Type: "fixed_size_list[2]", Nullable: true, Children: []arrowjson.Field{{Name: "item", Type: "float32", Nullable: true}}},
	{Name: "st", Type: "struct", Nullable: true, Children: []arrowjson.Field{
		{Name: "a", Type: "int64", Nullable: true}, {Name: "b", Type: "utf8", Nullable: true}}},
}, Metadata: map[string]string{"k": "v"}}

func TestDriverValuesRoundTrip(t *testing.T) {
	d := StartDriver(t, t.TempDir())
	ts := time.Date(2024, 1, 2, 3, 4, 5, 123456000, time.UTC)
	tsn := time.Date(1969, 12, 31, 23, 59, 59, 999999999, time.UTC)
	rows := []Record{
		{"id": int64(math.MaxInt64), "u": uint64(math.MaxUint64), "i32": int32(-7), "f": 0.1, "f32": float32(0.1), "b": true,
			"s": "héllo\n\"x\"", "bin": []byte{0, 255}, "d": "2024-02-29", "ts": ts, "tsn": tsn,
			"tags": []string{"a", ""}, "vec": []float32{1.5, -2}, "st": map[string]any{"a": int64(math.MinInt64), "b": "z"}},
		{"id": int64(9007199254740993), "f": math.NaN(), "f32": math.Inf(-1), "b": false, "tags": []any{nil}, "st": map[string]any{"a": nil}},
		{"id": int64(-1), "f": math.Copysign(0, -1)},
	}
	if v := must(d.CreateTable("t", typesSchema, rows)); v != 1 {
		t.Fatalf("version %d, want 1", v)
	}
	s := must(d.Read("t", ReadOptions{RowID: true}))
	want := []string{
		`{"_rowid":0,"b":true,"bin":"AP8=","d":"2024-02-29","f":0.1,"f32":0.1,"i32":-7,"id":9223372036854775807,"s":"héllo\n\"x\"","st":{"a":-9223372036854775808,"b":"z"},"tags":["a",""],"ts":"2024-01-02T03:04:05.123456","tsn":"1969-12-31T23:59:59.999999999Z","u":18446744073709551615,"vec":[1.5,-2]}`,
		`{"_rowid":1,"b":false,"bin":null,"d":null,"f":"NaN","f32":"-Infinity","i32":null,"id":9007199254740993,"s":null,"st":{"a":null,"b":null},"tags":[null],"ts":null,"tsn":null,"u":null,"vec":null}`,
		`{"_rowid":2,"b":null,"bin":null,"d":null,"f":-0,"f32":null,"i32":null,"id":-1,"s":null,"st":null,"tags":null,"ts":null,"tsn":null,"u":null,"vec":null}`,
	}
	if len(s.Rows) != len(want) {
		t.Fatalf("%d rows, want %d", len(s.Rows), len(want))
	}
	for i, r := range s.Rows {
		if got := r.Key(); got != want[i] {
			t.Errorf("row %d:\n got %s\nwant %s", i, got, want[i])
		}
	}
	if id := must(s.Rows[0].Int64("id")); id != math.MaxInt64 {
		t.Errorf("Int64(id) = %d", id)
	}
	if rid := must(s.Rows[2].RowID()); rid != 2 {
		t.Errorf("RowID = %d", rid)
	}
	if s.Schema.Metadata["k"] != "v" || s.Schema.Fields[0].Nullable || s.Schema.Fields[10].Type != "timestamp[ns, tz=UTC]" {
		t.Errorf("schema not kept: %+v", s.Schema)
	}
	// Bad input is refused with a message, and the driver lives on.
	if _, err := d.Add("t", []Record{{"nope": 1}}); !strings.Contains(Message(err), `no column "nope"`) {
		t.Errorf("unknown column: %v", err)
	}
	if _, err := d.Add("t", []Record{{"id": nil}}); !strings.Contains(Message(err), "null in non-nullable column id") {
		t.Errorf("null id: %v", err)
	}
	if _, err := d.Add("t", []Record{{"id": 1, "i32": int64(1) << 40}}); !strings.Contains(Message(err), "out of range") {
		t.Errorf("i32 overflow: %v", err)
	}
	if n := must(d.Count("t", 0)); n != 3 {
		t.Errorf("count %d after refused adds", n)
	}
}

func srcSchema() arrowjson.Schema {
	return arrowjson.Schema{Fields: []arrowjson.Field{
		{Name: "id", Type: "int64"}, {Name: "name", Type: "utf8", Nullable: true}, {Name: "x", Type: "int32", Nullable: true},
	}}
}

func TestDriverTableCommands(t *testing.T) {
	d := StartDriver(t, t.TempDir())
	recs := func(ids ...int) []Record {
		var out []Record
		for _, id := range ids {
			out = append(out, Record{"id": id, "name": "n" + string(rune('a'+id)), "x": id * 10})
		}
		return out
	}
	must(d.CreateTable("src", srcSchema(), recs(0, 1, 2)))
	if v := must(d.Add("src", recs(3))); v != 2 {
		t.Errorf("add → version %d", v)
	}
	if r := must(d.Update("src", "id = 1", map[string]string{"x": "x + 1"})); r.Version != 3 || r.RowsUpdated != 1 {
		t.Errorf("update → %+v", r)
	}
	if v := must(d.Delete("src", "id = 0")); v != 4 {
		t.Errorf("delete → %d", v)
	}
	if r := must(d.Upsert("src", "id", recs(2, 9))); r.Inserted != 1 || r.Updated != 1 {
		t.Errorf("upsert → %+v", r)
	}
	if r := must(d.DeleteBySource("src", "id", recs(1, 2, 9))); r.Deleted != 1 {
		t.Errorf("delete by source → %+v", r)
	}
	must(d.Optimize("src"))
	must(d.AddColumns("src", Column{Name: "x2", SQL: "x * 2"}))
	s := must(d.Read("src", ReadOptions{Special: true, Where: "id = 1"}))
	if len(s.Rows) != 1 || s.Rows[0].Text("x2") != "22" || s.Rows[0].Text("_row_last_updated_at_version") == "" {
		t.Errorf("read after add column: %+v", s.Rows)
	}
	must(d.DropColumns("src", "x2"))
	must(d.CreateIndex("src", "id", ""))
	if ix := must(d.ListIndices("src")); len(ix) != 1 || ix[0].Columns[0] != "id" {
		t.Errorf("indices %+v", ix)
	}
	old := must(d.Read("src", ReadOptions{Version: 2, RowID: true}))
	if old.Version != 2 || len(old.Rows) != 4 {
		t.Errorf("read at version 2: %+v", old)
	}
	latest := must(d.Version("src"))
	if v := must(d.Restore("src", 2)); v != latest+1 {
		t.Errorf("restore → %d, want %d", v, latest+1)
	}
	if n := must(d.Count("src", 0)); n != 4 {
		t.Errorf("count after restore %d", n)
	}
	must(d.Overwrite("src", recs(7)))
	after := must(d.Read("src", ReadOptions{RowID: true}))
	if len(after.Rows) != 1 || after.Rows[0].Text("_rowid") == "0" {
		t.Errorf("overwrite: %+v (stable row ids are never reused)", after.Rows)
	}
	if vs := must(d.Versions("src")); vs[len(vs)-1] != after.Version {
		t.Errorf("versions %v, latest %d", vs, after.Version)
	}
	if sc := must(d.Schema("src", 1)); len(sc.Fields) != 3 {
		t.Errorf("schema at 1: %+v", sc)
	}
	must(d.CreateTableWith("plain", srcSchema(), nil, CreateOptions{NoStableRowIDs: true}))
	if names := must(d.TableNames()); !slices.Equal(names, []string{"plain", "src"}) {
		t.Errorf("table names %v", names)
	}
	if err := d.DropTable("plain"); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Version("plain"); Message(err) == "" {
		t.Errorf("dropped table still opens: %v", err)
	}
	if err := d.Call("bogus", nil, nil); Message(err) != `driver: unknown command "bogus"` {
		t.Errorf("unknown command: %v", err)
	}
	rss := must(d.PeakRSS())
	if rss.Peak < rss.Current || rss.Current == 0 {
		t.Errorf("rss %+v", rss)
	}
	if err := d.ResetPeakRSS(); err != nil {
		t.Error(err)
	}
	other := t.TempDir()
	if err := d.Connect(other); err != nil {
		t.Fatal(err)
	}
	if names := must(d.TableNames()); len(names) != 0 || d.Dir() != other {
		t.Errorf("after Connect: tables %v in %s", names, d.Dir())
	}
}

func TestDriverViewCommands(t *testing.T) {
	d := StartDriver(t, t.TempDir())
	must(d.CreateTable("src", srcSchema(), []Record{{"id": 1, "name": "a", "x": 5}, {"id": 2, "name": "b", "x": 50}}))
	def := must(d.CreateView("v", "src", ViewSpec{
		Select: []Projection{{Name: "id"}, {Name: "shout", Expr: "upper(name)"}}, Where: "x > 10", Limit: Limit(5)}))
	if def.SourceTable != "src" || def.Projections[0] != [2]string{"id", "`id`"} || *def.Filter != "x > 10" || *def.Limit != 5 ||
		!slices.Equal(def.Inputs, []string{"id", "name", "x"}) || def.SourceNamespace == nil {
		t.Errorf("definition %+v", def)
	}
	if again := must(d.ViewDefinition("v")); again.Projections[1] != [2]string{"shout", "upper(name)"} {
		t.Errorf("reopened definition %+v", again)
	}
	r := must(d.Refresh("v", RefreshOptions{}))
	if r != (RefreshResult{Mode: "rebuild", RowsWritten: 1, SourceVersion: 1, Version: 3}) {
		t.Errorf("first refresh %+v", r)
	}
	if r := must(d.Refresh("v", RefreshOptions{})); r.Mode != "no_op" || r.Version != 3 {
		t.Errorf("second refresh %+v", r)
	}
	must(d.Add("src", []Record{{"id": 3, "name": "c", "x": 99}}))
	if r := must(d.Refresh("v", RefreshOptions{})); r.Mode != "incremental" || r.RowsWritten != 1 || r.SourceVersion != 2 {
		t.Errorf("after append %+v", r)
	}
	if r := must(d.Refresh("v", RefreshOptions{SourceVersion: Version(1)})); r.Mode != "rebuild" || r.SourceVersion != 1 {
		t.Errorf("pinned older %+v", r)
	}
	if r := must(d.Refresh("v", RefreshOptions{Full: true})); r.Mode != "rebuild" || r.RowsWritten != 2 {
		t.Errorf("full %+v", r)
	}
	rows := must(d.Read("v", ReadOptions{})).Rows
	if len(rows) != 2 || rows[0].Text("__source_row_id") != "1" || rows[1].Text("shout") != `"C"` {
		t.Errorf("view rows %v", rows)
	}
	_, err := d.Refresh("v", RefreshOptions{SourceVersion: Version(99)})
	var e *Error
	if !errors.As(err, &e) || !strings.HasPrefix(e.Head(), "lance error: Dataset at path") || strings.Contains(e.Head(), ".rs:") {
		t.Errorf("missing version: %v (head %q)", err, e.Head())
	}
	_, err = d.CreateView("bad", "src", ViewSpec{Select: []Projection{{Name: "nope"}}})
	if Message(err) != "Invalid expression for column 'nope': unknown column 'nope'" {
		t.Errorf("unknown column: %v", err)
	}
	_, err = d.CreateViewRaw("bad", "src", map[string]any{"limit": -1})
	if !strings.Contains(Message(err), "limit must be a non-negative integer") {
		t.Errorf("limit -1: %v", err)
	}
	// The oracle knows the definition's types, and CheckView holds the
	// view to them.
	_, sc, err := d.expected(must(d.ViewDefinition("v")), 0, nil)
	if err != nil || sc == nil || len(sc.Fields) != 3 || sc.Fields[1].Name != "shout" || sc.Fields[1].Type != "utf8" || sc.Fields[2].Type != "uint64" {
		t.Errorf("evaluated schema %+v, %v", sc, err)
	}
	if err := compareTypes(must(d.Schema("v", 0)), *sc); err != nil {
		t.Error(err)
	}
	bad := *sc
	bad.Fields = slices.Clone(sc.Fields)
	bad.Fields[1].Type = "large_utf8"
	if err := compareTypes(must(d.Schema("v", 0)), bad); err == nil {
		t.Error("a type mismatch passed")
	}
	if names := must(d.ListViews()); !slices.Equal(names, []string{"v"}) {
		t.Errorf("views %v", names)
	}
	if _, err := d.ViewDefinition("src"); !strings.Contains(Message(err), "is not a materialized view") {
		t.Errorf("plain table as view: %v", err)
	}
}

func TestDriverCancelKills(t *testing.T) {
	d := StartDriver(t, t.TempDir())
	done, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := d.CallContext(done, "ping", nil, nil); !errors.Is(err, context.Canceled) || errors.Is(err, ErrDriverDead) {
		t.Fatalf("call with a done context: %v", err)
	}
	if err := d.Call("ping", nil, nil); err != nil {
		t.Fatalf("driver unusable after a call with a done context: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, err := d.CallContext(ctx, "sleep", map[string]any{"ms": 60000}, nil); !errors.Is(err, ErrDriverDead) {
		t.Fatalf("cancelled call: %v", err)
	}
	if time.Since(start) > 30*time.Second {
		t.Fatal("the cancelled call waited for the command")
	}
	if err := d.Call("ping", nil, nil); !errors.Is(err, ErrDriverDead) {
		t.Fatalf("call after kill: %v", err)
	}
}
