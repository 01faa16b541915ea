package matview

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/mvd-project/mvd/internal/lancedbtest"
	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/vfs"
)

// TestReadColumnsChanged: a read column that is missing, changed type or
// nullability, or is another field (a new id) is reported; an unread
// column's changes are not.
func TestReadColumnsChanged(t *testing.T) {
	schema := func(fields ...arrow.Field) *lance.Schema {
		s, err := lance.NewSchemaFromArrow(arrow.NewSchema(fields, nil))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	id := arrow.Field{Name: "id", Type: arrow.PrimitiveTypes.Int64}
	amount := arrow.Field{Name: "amount", Type: arrow.PrimitiveTypes.Float64, Nullable: true}
	list := arrow.Field{Name: "tags", Type: arrow.ListOf(arrow.BinaryTypes.String), Nullable: true}
	base := schema(id, amount, list)
	cases := []struct {
		name  string
		b     *lance.Schema
		roots []string
		want  string // a substring of the report, "" for none
	}{
		{"same", schema(id, amount, list), []string{"id", "amount", "tags"}, ""},
		{"unread column changed type", schema(id, arrow.Field{Name: "amount", Type: arrow.PrimitiveTypes.Int32}, list), []string{"id"}, ""},
		{"read column changed type", schema(id, arrow.Field{Name: "amount", Type: arrow.PrimitiveTypes.Int32, Nullable: true}, list), []string{"amount"}, "type of source column 'amount'"},
		{"read column changed nullability", schema(id, arrow.Field{Name: "amount", Type: arrow.PrimitiveTypes.Float64}, list), []string{"amount"}, "type of source column 'amount'"},
		{"read list changed its item type", schema(id, amount, arrow.Field{Name: "tags", Type: arrow.ListOf(arrow.PrimitiveTypes.Int64), Nullable: true}), []string{"tags"}, "type of source column 'tags'"},
		{"read column dropped", schema(id, list), []string{"amount"}, "not in both versions"},
		{"read column is another field", schema(arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Int8}, id, amount, list), []string{"id"}, "type of source column 'id'"},
	}
	for _, c := range cases {
		got := readColumnsChanged(base, c.b, c.roots)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// TestSpanOverLanceDBCommits: the history facts and change sets of spans
// over LanceDB's commits: each version's operation and read-column change,
// a walk stopping at an overwrite, a cleaned-up version reported gone,
// segments of row-level steps composed (a row inserted then deleted is in
// no set), an offered change set taken as it is.
func TestSpanOverLanceDBCommits(t *testing.T) {
	lancedbtest.Require(t)
	ctx := context.Background()
	d := lancedbtest.StartDriver(t, t.TempDir())
	mustV := must[uint64](t)
	mustV(d.CreateTable("src", lancedbtest.SourceSchema(), lancedbtest.SourceRows(0, 10, 0)))
	src := must[*lance.Table](t)(lance.Open(ctx, vfs.OS(), d.TablePath("src")))
	snap := func(v uint64) *lance.Snapshot { return must[*lance.Snapshot](t)(src.Checkout(ctx, v)) }
	appended := mustV(d.Add("src", lancedbtest.SourceRows(10, 13, 0)))
	merged := mustV(d.AddColumns("src", lancedbtest.Column{Name: "extra", SQL: "score * 2"}))
	deleted := mustV(d.Delete("src", "id IN (1, 11)"))
	projected := mustV(d.DropColumns("src", "tags"))
	overwritten := mustV(d.Overwrite("src", []lancedbtest.Record{{"id": 20}, {"id": 21}}))
	roots := []string{"id", "amount"}
	walk := func(from, to uint64, roots []string) []spanStep {
		t.Helper()
		return must[*spanFacts](t)(walkSpan(ctx, snap(from), snap(to), roots)).steps
	}
	ops := func(steps []spanStep) string {
		var s []string
		for _, st := range steps {
			s = append(s, st.op+map[bool]string{true: "(gone)"}[st.gone]+map[bool]string{true: "(read columns)"}[st.readColumns != ""])
		}
		return strings.Join(s, " ")
	}
	if got := ops(walk(1, projected, roots)); got != "append merge delete project" {
		t.Errorf("walk to the drop of an unread column: %s", got)
	}
	if steps := walk(deleted, projected, []string{"tags"}); len(steps) != 1 || !strings.Contains(steps[0].readColumns, "'tags' is not in both versions") {
		t.Errorf("drop of a read column: %+v", steps)
	}
	if got := ops(walk(appended, overwritten, roots)); got != "merge delete project overwrite" {
		t.Errorf("walk to an overwrite: %s", got)
	}
	cs := must[*lance.ChangeSet](t)(changesOf(ctx, changeSpan{from: 1, to: projected, segments: []versionRange{{1, appended}, {merged, deleted}}}, snap(1), snap(projected), nil))
	if got := [3]string{fmtIDs(cs.Inserted), fmtIDs(cs.Updated), fmtIDs(cs.Deleted)}; got != [3]string{"[10 12]", "[]", "[1]"} || cs.From != 1 || cs.To != projected {
		t.Errorf("composed segments %d..%d: inserted, updated, deleted %v", cs.From, cs.To, got)
	}
	offered := &lance.ChangeSet{From: 1, To: appended, Inserted: roaring64.BitmapOf(10, 11, 12)}
	if got := must[*lance.ChangeSet](t)(changesOf(ctx, changeSpan{from: 1, to: appended, offered: true}, snap(1), snap(appended), offered)); got != offered {
		t.Errorf("offered change set not taken: %+v", got)
	}
	old, head := snap(1), snap(overwritten)
	mustV(d.OptimizeCleanup("src", time.Duration(0)))
	steps := must[*spanFacts](t)(walkSpan(ctx, old, head, roots)).steps
	if len(steps) != 1 || !steps[0].gone || steps[0].version != 2 {
		t.Errorf("walk over cleaned-up versions: %+v", steps)
	}
	if wv, at := watermarkFacts(ctx, src, 1, head, roots); wv.found || at != nil {
		t.Errorf("cleaned-up watermark version found: %+v", wv)
	}
}

func fmtIDs(b *roaring64.Bitmap) string { return fmt.Sprint(b.ToArray()) }
