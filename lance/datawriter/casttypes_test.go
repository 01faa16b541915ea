package datawriter_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/decimal256"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/mvd-project/mvd/internal/lancedbtest"
	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/lance/datafile"
)

// castSchema holds types LanceDB checks through SQL casts (to strings or
// integers): apache-arrow (JS) 18 has no large lists, and the casts show
// that LanceDB's own engine decodes the rest.
func castSchema() *arrow.Schema {
	return arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "dec", Type: &arrow.Decimal128Type{Precision: 20, Scale: 3}, Nullable: true},
		{Name: "dec256", Type: &arrow.Decimal256Type{Precision: 40, Scale: 2}, Nullable: true},
		{Name: "t32", Type: arrow.FixedWidthTypes.Time32ms, Nullable: true},
		{Name: "t64", Type: arrow.FixedWidthTypes.Time64us, Nullable: true},
		{Name: "dur", Type: arrow.FixedWidthTypes.Duration_ms, Nullable: true},
		{Name: "ll", Type: arrow.LargeListOf(arrow.PrimitiveTypes.Int32), Nullable: true},
		{Name: "lll", Type: arrow.ListOf(arrow.LargeListOf(arrow.BinaryTypes.String)), Nullable: true},
	}, nil)
}

func castRecord(s *arrow.Schema, n int) arrow.RecordBatch {
	b := array.NewRecordBuilder(memory.DefaultAllocator, s)
	defer b.Release()
	for i := 0; i < n; i++ {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		nullAt := func(col, k int, fn func()) {
			if i%k == 2 {
				b.Field(col).AppendNull()
			} else {
				fn()
			}
		}
		nullAt(1, 7, func() {
			b.Field(1).(*array.Decimal128Builder).Append(decimal128.FromI64(int64(i)*123_457 - 5_000_000))
		})
		nullAt(2, 9, func() {
			v := decimal256.FromI64(int64(i)*987_654_321 - 3_000_000_000).Mul(decimal256.FromI64(1_000_000_007))
			b.Field(2).(*array.Decimal256Builder).Append(v)
		})
		nullAt(3, 5, func() { b.Field(3).(*array.Time32Builder).Append(arrow.Time32(i * 1_003 % 86_400_000)) })
		nullAt(4, 6, func() {
			b.Field(4).(*array.Time64Builder).Append(arrow.Time64(int64(i) * 3_600_000_017 % 86_400_000_000))
		})
		nullAt(5, 4, func() { b.Field(5).(*array.DurationBuilder).Append(arrow.Duration(int64(i)*86_400_013 - 1000)) })
		lb := b.Field(6).(*array.LargeListBuilder)
		switch {
		case i%6 == 1:
			lb.AppendNull()
		case i%9 == 0:
			lb.AppendEmptyValue()
		default:
			lb.Append(true)
			for j := 0; j < i%5+1; j++ {
				if (i+j)%7 == 3 {
					lb.ValueBuilder().AppendNull()
				} else {
					lb.ValueBuilder().(*array.Int32Builder).Append(int32(i*10 + j))
				}
			}
		}
		ob := b.Field(7).(*array.ListBuilder)
		if i%8 == 3 {
			ob.AppendNull()
		} else {
			ob.Append(true)
			ib := ob.ValueBuilder().(*array.LargeListBuilder)
			for j := 0; j < i%3; j++ {
				ib.Append(true)
				for m := 0; m < (i+j)%3; m++ {
					ib.ValueBuilder().(*array.StringBuilder).Append(fmt.Sprintf("v%d", i+j+m))
				}
			}
		}
	}
	return b.NewRecordBatch()
}

// TestCastTypesRoundTrip reads decimals, times, durations and large lists
// back with mvd's reader in every version.
func TestCastTypesRoundTrip(t *testing.T) {
	for _, version := range []lance.FileVersion{"2.2", "2.1", "2.0"} {
		t.Run(string(version), func(t *testing.T) {
			roundTripGo(t, version, castRecord(castSchema(), 3000))
		})
	}
}

// TestCastTypesInterop has LanceDB cast each such column to a string and
// compares the text with what the written values must print as.
func TestCastTypesInterop(t *testing.T) {
	lancedbtest.Require(t)
	t.Parallel()
	for _, version := range []lance.FileVersion{"2.2", "2.1", "2.0"} {
		t.Run(string(version), func(t *testing.T) {
			t.Parallel()
			as := castSchema()
			rec := castRecord(as, 600)
			root := createTable(t, version, rec)
			cols := map[string]string{"id": "id", "dec": "CAST(dec AS STRING)", "dec256": "CAST(dec256 AS STRING)", "t32": "CAST(t32 AS INT)",
				"t64": "CAST(t64 AS BIGINT)", "dur": "CAST(dur AS BIGINT)",
				"ll": "arrow_cast(ll, 'List(Int32)')", "lll": "arrow_cast(lll, 'List(List(Utf8))')"}
			var out struct {
				Results [][]map[string]json.RawMessage `json:"results"`
			}
			b := lancedbtest.RunNode(t, "interop.mjs", "ops", root, mustJSON(t, []map[string]any{{"op": "select", "columns": cols}}))
			if err := json.Unmarshal(b, &out); err != nil {
				t.Fatal(err)
			}
			rows := out.Results[0]
			if len(rows) != 600 {
				t.Fatalf("LanceDB returns %d rows", len(rows))
			}
			// What each cast must print: integers for times and durations,
			// the scaled text of decimals, large lists as lists.
			want := func(col string, r int) []byte {
				a := rec.Column(as.FieldIndices(col)[0])
				if a.IsNull(r) {
					return []byte("null")
				}
				switch v := a.(type) {
				case *array.Decimal128:
					return mustJSONBytes(t, v.Value(r).ToString(3))
				case *array.Decimal256:
					return mustJSONBytes(t, v.Value(r).ToString(2))
				case *array.Time32:
					return fmt.Append(nil, int32(v.Value(r)))
				case *array.Time64:
					return fmt.Append(nil, int64(v.Value(r)))
				case *array.Duration:
					return fmt.Append(nil, int64(v.Value(r)))
				}
				b, err := datafile.AppendJSON(nil, a, r)
				if err != nil {
					t.Fatal(err)
				}
				return b
			}
			for col := range cols {
				bad := 0
				for r, row := range rows {
					if w := want(col, r); !sameValue(t, arrow.PrimitiveTypes.Int64, row[col], w) {
						if bad++; bad <= 3 {
							t.Errorf("row %d %s: LanceDB reads %s, mvd wrote %s", r, cols[col], row[col], w)
						}
					}
				}
			}
		})
	}
}

func mustJSONBytes(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
