package datawriter_test

import (
	"context"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/mvd-project/mvd/internal/lancedbtest"
	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/lance/datawriter"
	"github.com/mvd-project/mvd/vfs"
)

// TestOverwriteSchemaInterop overwrites a table with a new schema (with
// field metadata) and a new data file version, as a view rebuild after a
// schema change does; LanceDB reads the new schema and rows, row ids keep
// counting, and LanceDB's next append follows the new file version.
func TestOverwriteSchemaInterop(t *testing.T) {
	lancedbtest.Require(t)
	t.Parallel()
	tt := createBase(t, "2.2", idRange(0, 100))
	md := arrow.NewMetadata([]string{"mv.definition"}, []string{`{"kind":"select"}`})
	fmd := arrow.NewMetadata([]string{"note"}, []string{"vector"})
	as := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "label", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "emb", Type: arrow.FixedSizeListOf(3, arrow.PrimitiveTypes.Float32), Nullable: true, Metadata: fmd},
	}, &md)
	schema, err := lance.NewSchemaFromArrow(as)
	if err != nil {
		t.Fatal(err)
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, as)
	for i := 0; i < 50; i++ {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		b.Field(1).(*array.StringBuilder).Append("x")
		fb := b.Field(2).(*array.FixedSizeListBuilder)
		fb.Append(true)
		for j := 0; j < 3; j++ {
			fb.ValueBuilder().(*array.Float32Builder).Append(float32(i + j))
		}
	}
	rec := b.NewRecordBatch()
	frags, err := datawriter.WriteFragments(vfs.OS(), tt.root, schema, "2.1", []arrow.RecordBatch{rec})
	if err != nil {
		t.Fatal(err)
	}
	m := tt.commit(0, &lance.Commit{Overwrite: true, Schema: schema, DataFileVersion: "2.1", Fragments: frags})
	if m.DataFileVersion != "2.1" || m.NextRowID != 150 {
		t.Fatalf("overwrite: data file version %s, next row id %d", m.DataFileVersion, m.NextRowID)
	}
	got := lanceDBRead(t, tt.root)
	if got.NumRows != 50 || got.SchemaMetadata["mv.definition"] != `{"kind":"select"}` || got.Rows["_rowid"][0] != 100 {
		t.Fatalf("LanceDB reads %d rows, metadata %v, first row id %d", got.NumRows, got.SchemaMetadata, got.Rows["_rowid"][0])
	}
	if want := `"metadata":{"note":"vector"}`; !strings.Contains(string(got.Schema), want) {
		t.Errorf("LanceDB's schema %s lacks the field metadata %s", got.Schema, want)
	}
	checkValues(t, rec, 0, got.Data)
	lanceDBOps(t, tt.root, map[string]any{"op": "add_rows", "rows": []map[string]any{{"id": 99, "label": "y", "emb": []float64{1, 2, 3}}}})
	latest, err := tt.tbl.Checkout(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	last := latest.Fragments[len(latest.Fragments)-1].Files[0]
	if last.Major != 2 || last.Minor != 1 || latest.LiveRows() != 51 {
		t.Errorf("LanceDB appended a %d.%d file; table has %d rows", last.Major, last.Minor, latest.LiveRows())
	}
}
