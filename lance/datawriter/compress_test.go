package datawriter_test

import (
	"bytes"
	"context"
	"fmt"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/mvd-project/mvd/internal/lancedbtest"
	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/lance/datafile"
	"github.com/mvd-project/mvd/lance/datawriter"
	"github.com/mvd-project/mvd/vfs"
)

// compressSchema has a column for each compression the 2.2 writer
// chooses: dictionaries (small, and large enough for LZ4), FSST for
// distinct strings (binary stays plain, as in LanceDB), bit-packed
// timestamps and dates, packed rep/def levels of lists long enough for
// several 1024-level blocks per chunk, and strings that stay plain.
func compressSchema() *arrow.Schema {
	return arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "cat", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "many", Type: arrow.BinaryTypes.String},
		{Name: "bin", Type: arrow.BinaryTypes.Binary, Nullable: true},
		{Name: "uniq", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "tags", Type: arrow.ListOf(arrow.BinaryTypes.String), Nullable: true},
		{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond}, Nullable: true},
		{Name: "day", Type: arrow.FixedWidthTypes.Date32, Nullable: true},
		{Name: "nums", Type: arrow.ListOf(arrow.PrimitiveTypes.Int32), Nullable: true},
		{Name: "raw", Type: arrow.BinaryTypes.Binary},
		{Name: "price", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "ratio", Type: arrow.PrimitiveTypes.Float64},
		{Name: "level", Type: arrow.PrimitiveTypes.Float32, Nullable: true},
	}, nil)
}

var compressCats = []string{"red", "green", "blue", "cyan", "", "magenta", "yellow", "black"}

// compressRecord builds rows [start, start+n) of compressSchema.
func compressRecord(s *arrow.Schema, start, n int) arrow.RecordBatch {
	b := array.NewRecordBuilder(memory.DefaultAllocator, s)
	defer b.Release()
	for i := start; i < start+n; i++ {
		h := uint32(i) * 2654435761
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		if h%19 == 0 {
			b.Field(1).AppendNull()
		} else {
			b.Field(1).(*array.StringBuilder).Append(compressCats[h%uint32(len(compressCats))])
		}
		// 1,500 values of ~40 bytes: a 60 KB dictionary, LZ4-compressed.
		b.Field(2).(*array.StringBuilder).Append(fmt.Sprintf("value-%04d-%s", (i*7)%1500, strings.Repeat("q", 30)))
		if h%23 == 1 {
			b.Field(3).AppendNull()
		} else {
			b.Field(3).(*array.BinaryBuilder).Append([]byte{byte(h % 5), 0, 0xff})
		}
		if h%29 == 2 {
			b.Field(4).AppendNull()
		} else {
			// Unique: FSST-compressed (escaped bytes included).
			b.Field(4).(*array.StringBuilder).Append(fmt.Sprintf("row-%08d-%08x-lorem-ipsum-\x01~é%c", i, h, rune(h%5000)))
		}
		tb := b.Field(5).(*array.ListBuilder)
		switch {
		case h%37 == 3:
			tb.AppendNull()
		case h%31 == 4:
			tb.AppendEmptyValue()
		default:
			tb.Append(true)
			for j := 0; j < int(h>>8)%5; j++ {
				if (i+j)%17 == 0 {
					tb.ValueBuilder().AppendNull()
				} else {
					tb.ValueBuilder().(*array.StringBuilder).Append(compressCats[(int(h>>12)+j)%len(compressCats)])
				}
			}
		}
		if h%31 == 5 {
			b.Field(6).AppendNull()
		} else {
			b.Field(6).(*array.TimestampBuilder).Append(arrow.Timestamp(1_704_067_200_000_000 + int64(i)*1_000_003))
		}
		if h%41 == 6 {
			b.Field(7).AppendNull()
		} else {
			b.Field(7).(*array.Date32Builder).Append(arrow.Date32(19000 + i/100))
		}
		nb := b.Field(8).(*array.ListBuilder)
		if h%43 == 7 {
			nb.AppendNull()
		} else {
			nb.Append(true)
			// Lists of 0-5 items, a few of up to 300: chunks of
			// several 1024-level blocks and partial ones.
			k := int(h>>4) % 6
			if i%50 == 0 {
				k = int(h>>4) % 300
			}
			for j := 0; j < k; j++ {
				if j%13 == 5 {
					nb.ValueBuilder().AppendNull()
				} else {
					nb.ValueBuilder().(*array.Int32Builder).Append(int32(i + j))
				}
			}
		}
		b.Field(9).(*array.BinaryBuilder).Append([]byte(fmt.Sprintf("raw-%08d-%08x", i, h)))
		// 1,000 distinct prices (a dictionary), distinct ratios (flat).
		if h%47 == 8 {
			b.Field(10).AppendNull()
		} else {
			b.Field(10).(*array.Float64Builder).Append(float64(h%1000) + 0.25)
		}
		b.Field(11).(*array.Float64Builder).Append(float64(i) / 7)
		if h%53 == 9 {
			b.Field(12).AppendNull()
		} else {
			b.Field(12).(*array.Float32Builder).Append(float32(h%9) / 2)
		}
	}
	return b.NewRecordBatch()
}

// TestCompressedPagesInterop writes compressSchema in 2.2 and checks that
// each column got the compression LanceDB 0.39 would give it (dictionary,
// LZ4 dictionary, FSST, bit-packed values and levels, plain binary where
// a dictionary would not pay), that mvd's reader scans and takes every
// value back, that LanceDB reads every value, and that 2.1 (which stays
// flat) reads back too and is larger.
func TestCompressedPagesInterop(t *testing.T) {
	t.Parallel()
	as := compressSchema()
	schema, err := lance.NewSchemaFromArrow(as)
	if err != nil {
		t.Fatal(err)
	}
	const n = 8_000
	recs := []arrow.RecordBatch{compressRecord(as, 0, 5_000), compressRecord(as, 5_000, n-5_000)}
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	all := compressRecord(as, 0, n)
	defer all.Release()
	var size [2]uint64
	for k, version := range []lance.FileVersion{"2.2", "2.1"} {
		root := filepath.Join(t.TempDir(), "c.lance")
		frags, err := datawriter.WriteFragments(vfs.OS(), root, schema, version, recs)
		if err != nil {
			t.Fatal(err)
		}
		df := frags[0].Files[0]
		size[k] = df.SizeBytes
		readBackGo(t, root, schema, df, all)
		takeBackGo(t, root, schema, df, all)
		if version != "2.2" {
			continue
		}
		encs := pageEncodings(t, root, df)
		want := map[string][]string{
			"cat":       {"dictionary(variable", "value_compression(inline_bitpacking(uncompressed_bits_per_value=32", "def_compression(out_of_line_bitpacking(uncompressed_bits_per_value=16 values(flat(bits_per_value=1))"},
			"many":      {"dictionary(general(compression(scheme=COMPRESSION_ALGORITHM_LZ4) values(variable"},
			"bin":       {"dictionary(variable"},
			"uniq":      {"value_compression(fsst(values(variable"},
			"raw":       {"value_compression(variable"},
			"tags.item": {"dictionary(", "rep_compression(out_of_line_bitpacking", "def_compression(out_of_line_bitpacking(uncompressed_bits_per_value=16 values(flat(bits_per_value=2))"},
			"ts":        {"value_compression(inline_bitpacking(uncompressed_bits_per_value=64"},
			"day":       {"value_compression(inline_bitpacking(uncompressed_bits_per_value=32"},
			"nums.item": {"rep_compression(out_of_line_bitpacking", "def_compression(out_of_line_bitpacking"},
			"price":     {"value_compression(inline_bitpacking(uncompressed_bits_per_value=32", "dictionary(general(compression(scheme=COMPRESSION_ALGORITHM_LZ4) values(flat(bits_per_value=64"},
			"ratio":     {"value_compression(flat(bits_per_value=64"},
			"level":     {"value_compression(inline_bitpacking(uncompressed_bits_per_value=32", "dictionary(flat(bits_per_value=32"},
		}
		for col, subs := range want {
			if len(encs[col]) == 0 {
				t.Errorf("column %s: no pages", col)
			}
			for _, e := range encs[col] {
				for _, sub := range subs {
					if !strings.Contains(e, sub) {
						t.Errorf("column %s: page encoding %s lacks %s", col, e, sub)
					}
				}
			}
		}
		if e := encs["ratio"]; len(e) > 0 && strings.Contains(e[0], "dictionary") {
			t.Errorf("column ratio (distinct values) was dictionary-encoded: %s", e[0])
		}
		if e := encs["uniq"]; len(e) > 0 && strings.Contains(e[0], "dictionary") {
			t.Errorf("column uniq (distinct values) was dictionary-encoded: %s", e[0])
		}
		t.Run("lancedb", func(t *testing.T) {
			lancedbtest.Require(t)
			if _, _, err := lance.Create(context.Background(), vfs.OS(), root, lance.CreateOptions{Schema: schema, Fragments: frags, DataFileVersion: version}); err != nil {
				t.Fatal(err)
			}
			got := lanceDBRead(t, root)
			if got.NumRows != n || len(got.Data) != n {
				t.Fatalf("LanceDB reads %d rows (%d in the scan), want %d", got.NumRows, len(got.Data), n)
			}
			checkValues(t, all, 0, got.Data)
		})
	}
	if float64(size[0]) > 0.6*float64(size[1]) {
		t.Errorf("2.2 file of %d bytes, 2.1 (flat) %d: the 2.2 pages were not compressed", size[0], size[1])
	}
}

// pageEncodings lists, per column path, the encodings of its pages in the
// data file df of the table at root.
func pageEncodings(t *testing.T, root string, df lance.DataFile) map[string][]string {
	t.Helper()
	f, err := vfs.OS().Open(path.Join(root, "data", df.Path))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rd, err := datafile.Open(f, f.Size(), df.Path)
	if err != nil {
		t.Fatal(err)
	}
	names := map[int32]string{}
	var walk func(prefix string, fl *lance.Field)
	walk = func(prefix string, fl *lance.Field) {
		names[fl.ID] = prefix + fl.Name
		for _, c := range fl.Children {
			walk(prefix+fl.Name+".", c)
		}
	}
	for _, fl := range rd.Schema().Fields {
		walk("", fl)
	}
	pages, err := rd.Pages()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, p := range pages {
		out[names[p.Field]] = append(out[names[p.Field]], p.Encoding)
	}
	return out
}

// takeBackGo takes a spread of rows (the first, the last, both sides of
// chunk and page edges) with mvd's ReadFieldRows and compares them with
// what was written.
func takeBackGo(t *testing.T, root string, schema *lance.Schema, df lance.DataFile, rec arrow.RecordBatch) {
	t.Helper()
	f, err := vfs.OS().Open(path.Join(root, "data", df.Path))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rd, err := datafile.Open(f, f.Size(), df.Path)
	if err != nil {
		t.Fatal(err)
	}
	n := uint64(rec.NumRows())
	var rows []uint64
	for r := uint64(0); r < n; r += 997 {
		rows = append(rows, r, r+1)
	}
	for _, r := range []uint64{1023, 1024, 4095, 4096, 5_000, 65535, 65536} {
		if r < n {
			rows = append(rows, r)
		}
	}
	rows = append(rows, n-1)
	slicesSort(rows)
	for i, field := range schema.Fields {
		dt, _ := field.ArrowType()
		got, err := rd.ReadFieldRows(context.Background(), field.ID, dt, rows, memory.DefaultAllocator)
		if err != nil {
			t.Errorf("take field %q: %v", field.Name, err)
			continue
		}
		for k, r := range rows {
			g, _ := datafile.AppendJSON(nil, got, k)
			w, _ := datafile.AppendJSON(nil, rec.Column(i), int(r))
			if !bytes.Equal(g, w) {
				t.Errorf("take field %q row %d: read %s, wrote %s", field.Name, r, g, w)
				break
			}
		}
		got.Release()
	}
}

// slicesSort sorts and dedupes rows in place order (rows are few).
func slicesSort(rows []uint64) {
	for i := 1; i < len(rows); i++ {
		for j := i; j > 0 && rows[j] < rows[j-1]; j-- {
			rows[j], rows[j-1] = rows[j-1], rows[j]
		}
	}
}
