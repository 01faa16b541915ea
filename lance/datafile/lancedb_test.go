package datafile

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	_ "time/tzdata" // the fixtures use named time zones

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/protobuf/proto"

	"github.com/mvd-project/mvd/internal/lancedbtest"
	"github.com/mvd-project/mvd/lance/internal/format"
	"github.com/mvd-project/mvd/lance/internal/pb/tablepb"
)

// harnessDir is the LanceDB harness (node_modules and generators).
func harnessDir(t testing.TB) string {
	t.Helper()
	lancedbtest.Require(t)
	return lancedbtest.HarnessDir(t)
}

// generate runs types.mjs for the given versions and sizes into a temp dir.
func generate(t testing.TB, versions, sizes string) string {
	t.Helper()
	h := harnessDir(t)
	out := t.TempDir()
	cmd := exec.Command("node", "types.mjs", out, versions, sizes)
	cmd.Dir = h
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("types.mjs: %v\n%s", err, stderr.String())
	}
	return out
}

// latestManifest decodes the newest manifest of a table directory.
func latestManifest(t testing.TB, table string) *tablepb.Manifest {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(table, "_versions"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		n := e.Name()
		if strings.HasSuffix(n, ".manifest") && len(n) == 20+len(".manifest") {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	if len(names) == 0 {
		t.Fatalf("no manifests in %s", table)
	}
	b, err := os.ReadFile(filepath.Join(table, "_versions", names[0]))
	if err != nil {
		t.Fatal(err)
	}
	if len(b) < 16 || string(b[len(b)-4:]) != "LANC" {
		t.Fatalf("bad manifest tail in %s", names[0])
	}
	pos := binary.LittleEndian.Uint64(b[len(b)-16:])
	if pos+4 > uint64(len(b)) {
		t.Fatalf("bad manifest position %d", pos)
	}
	n := binary.LittleEndian.Uint32(b[pos:])
	var m tablepb.Manifest
	if err := proto.Unmarshal(b[pos+4:pos+4+uint64(n)], &m); err != nil {
		t.Fatal(err)
	}
	return &m
}

// jsField is a field as types.mjs describes it.
type jsField struct {
	Name     string    `json:"name"`
	Type     string    `json:"type"`
	Nullable bool      `json:"nullable"`
	Children []jsField `json:"children"`
}

type answer struct {
	Schema []jsField                    `json:"schema"`
	Rows   []map[string]json.RawMessage `json:"rows"`
}

// jsType renders an Arrow type the way apache-arrow (JS) prints it.
func jsType(dt arrow.DataType) string {
	unit := func(u arrow.TimeUnit) string {
		return [...]string{"SECOND", "MILLISECOND", "MICROSECOND", "NANOSECOND"}[u]
	}
	switch t := dt.(type) {
	case *arrow.NullType:
		return "Null"
	case *arrow.BooleanType:
		return "Bool"
	case *arrow.Int8Type, *arrow.Int16Type, *arrow.Int32Type, *arrow.Int64Type:
		return fmt.Sprintf("Int%d", t.(arrow.FixedWidthDataType).BitWidth())
	case *arrow.Uint8Type, *arrow.Uint16Type, *arrow.Uint32Type, *arrow.Uint64Type:
		return fmt.Sprintf("Uint%d", t.(arrow.FixedWidthDataType).BitWidth())
	case *arrow.Float16Type, *arrow.Float32Type, *arrow.Float64Type:
		return fmt.Sprintf("Float%d", t.(arrow.FixedWidthDataType).BitWidth())
	case *arrow.StringType:
		return "Utf8"
	case *arrow.LargeStringType:
		return "LargeUtf8"
	case *arrow.BinaryType:
		return "Binary"
	case *arrow.LargeBinaryType:
		return "LargeBinary"
	case *arrow.FixedSizeBinaryType:
		return fmt.Sprintf("FixedSizeBinary[%d]", t.ByteWidth)
	case *arrow.Date32Type:
		return "Date32<DAY>"
	case *arrow.Date64Type:
		return "Date64<MILLISECOND>"
	case *arrow.Time32Type:
		return "Time32<" + unit(t.Unit) + ">"
	case *arrow.Time64Type:
		return "Time64<" + unit(t.Unit) + ">"
	case *arrow.TimestampType:
		if t.TimeZone != "" {
			return "Timestamp<" + unit(t.Unit) + ", " + t.TimeZone + ">"
		}
		return "Timestamp<" + unit(t.Unit) + ">"
	case *arrow.DurationType:
		return "Duration<" + unit(t.Unit) + ">"
	case *arrow.Decimal128Type:
		sign := ""
		if t.Scale > 0 {
			sign = "+"
		}
		return fmt.Sprintf("Decimal[%de%s%d]", t.Precision, sign, t.Scale)
	case *arrow.ListType:
		return "List<" + jsType(t.Elem()) + ">"
	case *arrow.FixedSizeListType:
		return fmt.Sprintf("FixedSizeList[%d]<%s>", t.Len(), jsType(t.Elem()))
	case *arrow.StructType:
		parts := make([]string, t.NumFields())
		for i, f := range t.Fields() {
			parts[i] = f.Name + ":" + jsType(f.Type)
		}
		return "Struct<{" + strings.Join(parts, ", ") + "}>"
	case *arrow.DictionaryType:
		return "Dictionary<" + jsType(t.IndexType) + ", " + jsType(t.ValueType) + ">"
	}
	return dt.String()
}

// checkField compares our Arrow field with LanceDB's, children included.
func checkField(t *testing.T, path string, got arrow.Field, want jsField) {
	t.Helper()
	if got.Name != want.Name || got.Nullable != want.Nullable || jsType(got.Type) != want.Type {
		t.Errorf("%s: got %s %s nullable=%v, LanceDB says %s %s nullable=%v", path, got.Name, jsType(got.Type), got.Nullable, want.Name, want.Type, want.Nullable)
		return
	}
	var children []arrow.Field
	switch dt := got.Type.(type) {
	case *arrow.StructType:
		children = dt.Fields()
	case arrow.ListLikeType:
		children = []arrow.Field{dt.ElemField()}
	}
	if len(children) != len(want.Children) {
		t.Errorf("%s: %d children, LanceDB says %d", path, len(children), len(want.Children))
		return
	}
	for i := range children {
		checkField(t, path+"."+want.Children[i].Name, children[i], want.Children[i])
	}
}

func readAnswer(t testing.TB, path string) *answer {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var a answer
	if err := json.Unmarshal(b, &a); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return &a
}

// sameJSON compares two JSON texts by value; numbers compare exactly as
// decimals (so 1e+21 equals 1e21 but 0.1 never equals 0.1000001).
func sameJSON(a, b []byte) (bool, error) {
	if bytes.Equal(a, b) {
		return true, nil
	}
	var x, y any
	da := json.NewDecoder(bytes.NewReader(a))
	da.UseNumber()
	db := json.NewDecoder(bytes.NewReader(b))
	db.UseNumber()
	if err := da.Decode(&x); err != nil {
		return false, fmt.Errorf("decode %s: %w", a, err)
	}
	if err := db.Decode(&y); err != nil {
		return false, fmt.Errorf("decode %s: %w", b, err)
	}
	return sameValue(x, y), nil
}

func sameValue(x, y any) bool {
	switch a := x.(type) {
	case json.Number:
		b, ok := y.(json.Number)
		if !ok {
			return false
		}
		if a == b {
			return true
		}
		ra, ok1 := new(big.Rat).SetString(string(a))
		rb, ok2 := new(big.Rat).SetString(string(b))
		return ok1 && ok2 && ra.Cmp(rb) == 0 && strings.HasPrefix(string(a), "-") == strings.HasPrefix(string(b), "-")
	case []any:
		b, ok := y.([]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for i := range a {
			if !sameValue(a[i], b[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		b, ok := y.(map[string]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for k, v := range a {
			if !sameValue(v, b[k]) {
				return false
			}
		}
		return true
	}
	return x == y
}

// checkTable decodes every column of every fragment of table and compares
// each value with LanceDB's answer.
func checkTable(t *testing.T, table, answerPath string) {
	m := latestManifest(t, table)
	want := readAnswer(t, answerPath)
	schema, err := arrowSchemaOf(m.GetFields(), m.GetSchemaMetadata())
	if err != nil {
		t.Fatal(err)
	}
	if len(schema.Fields()) != len(want.Schema) {
		t.Fatalf("schema has %d fields, LanceDB says %d", len(schema.Fields()), len(want.Schema))
	}
	ids := map[string]int32{}
	for _, f := range m.GetFields() {
		if f.GetParentId() < 0 {
			ids[f.GetName()] = f.GetId()
		}
	}
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	row := 0
	for _, frag := range m.GetFragments() {
		if len(frag.GetFiles()) != 1 {
			t.Fatalf("fragment %d has %d files", frag.GetId(), len(frag.GetFiles()))
		}
		p := filepath.Join(table, "data", frag.GetFiles()[0].GetPath())
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		st, _ := f.Stat()
		r, err := Open(f, st.Size(), p)
		if err != nil {
			t.Fatal(err)
		}
		// Nullability is the table's (legacy files' strings follow it).
		ts, err := format.NewSchema(m.GetFields(), m.GetSchemaMetadata())
		if err != nil {
			t.Fatal(err)
		}
		r = r.WithTableSchema(ts)
		n := int(r.NumRows())
		for k, fld := range schema.Fields() {
			checkField(t, fld.Name, fld, want.Schema[k])
			arr, err := r.ReadField(context.Background(), ids[fld.Name], fld.Type, 0, uint64(n), mem)
			if err != nil {
				t.Errorf("%s: %v", fld.Name, err)
				continue
			}
			bad := 0
			for i := 0; i < n; i++ {
				got, err := AppendJSON(nil, arr, i)
				if err != nil {
					t.Errorf("%s row %d: %v", fld.Name, row+i, err)
					break
				}
				exp := want.Rows[row+i][fld.Name]
				ok, err := sameJSON(got, exp)
				if err != nil || !ok {
					if bad++; bad <= 3 {
						t.Errorf("%s row %d: got %s, LanceDB says %s (%v)", fld.Name, row+i, got, exp, err)
					}
				}
			}
			arr.Release()
			// A range starting and ending inside pages gives the same rows.
			if lo, m := uint64(n/3), uint64(n/4); m > 0 {
				mid, err := r.ReadField(context.Background(), ids[fld.Name], fld.Type, lo, m, mem)
				if err != nil {
					t.Errorf("%s rows %d+%d: %v", fld.Name, lo, m, err)
				} else {
					for i := 0; i < int(m); i++ {
						got, _ := AppendJSON(nil, mid, i)
						if ok, _ := sameJSON(got, want.Rows[row+int(lo)+i][fld.Name]); !ok {
							t.Errorf("%s range row %d: got %s, want %s", fld.Name, int(lo)+i, got, want.Rows[row+int(lo)+i][fld.Name])
							break
						}
					}
					mid.Release()
				}
			}
			// A chunked scan gives the same rows.
			for start := uint64(0); start < uint64(n); {
				ch, lo, hi, err := r.ReadFieldChunk(context.Background(), ids[fld.Name], fld.Type, start, 777, mem)
				if err != nil {
					t.Errorf("%s chunk at %d: %v", fld.Name, start, err)
					break
				}
				if lo > start || hi <= start || uint64(ch.Len()) != hi-lo {
					t.Errorf("%s chunk at %d is [%d, %d) with %d rows", fld.Name, start, lo, hi, ch.Len())
					ch.Release()
					break
				}
				for i := start; i < hi; i += 97 {
					got, _ := AppendJSON(nil, ch, int(i-lo))
					if ok, _ := sameJSON(got, want.Rows[row+int(i)][fld.Name]); !ok {
						t.Errorf("%s chunk row %d: got %s, want %s", fld.Name, i, got, want.Rows[row+int(i)][fld.Name])
					}
				}
				ch.Release()
				start = hi
			}
			// Take a few rows and compare them too.
			rows := []uint64{0, 1, 2, uint64(n / 3), uint64(n / 2), uint64(n / 2), uint64(n/2 + 1), uint64(n - 1)}
			for k := range rows {
				rows[k] = min(rows[k], uint64(max(n-1, 0)))
			}
			// And a dense take (runs, gaps and repeats across every chunk
			// and page), which gathers rows inside decoded chunks.
			var dense []uint64
			for i := uint64(0); i < uint64(n); i++ {
				if i%5 != 3 {
					dense = append(dense, i)
				}
				if i%11 == 0 {
					dense = append(dense, i)
				}
			}
			for _, rows := range [][]uint64{rows, dense} {
				if n == 0 {
					break
				}
				sub, err := r.ReadFieldRows(context.Background(), ids[fld.Name], fld.Type, rows, mem)
				if err != nil {
					t.Errorf("%s take: %v", fld.Name, err)
					continue
				}
				if sub.Len() != len(rows) {
					t.Errorf("%s take of %d rows returned %d", fld.Name, len(rows), sub.Len())
				}
				for j, x := range rows {
					got, _ := AppendJSON(nil, sub, j)
					if ok, _ := sameJSON(got, want.Rows[row+int(x)][fld.Name]); !ok {
						t.Errorf("%s take row %d: got %s, want %s", fld.Name, x, got, want.Rows[row+int(x)][fld.Name])
						break
					}
				}
				sub.Release()
			}
		}
		f.Close()
		row += n
	}
	if row != len(want.Rows) {
		t.Errorf("decoded %d rows, LanceDB returned %d", row, len(want.Rows))
	}
	_ = arrow.Null
}

func TestLanceDBTypes(t *testing.T) {
	out := generate(t, "2.0,2.1,2.2", "10,3000")
	ents, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		name, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok {
			continue
		}
		t.Run(name, func(t *testing.T) {
			checkTable(t, filepath.Join(out, "db", name+".lance"), filepath.Join(out, e.Name()))
		})
	}
}

// TestLanceDBTypesBig is the 100k-row variant (multi-page columns, 2.0 page
// splits, larger chunks). It takes about a minute to generate, so it runs
// only with MVD_LANCEDB_BIG=1 (or MVD_LANCEDB_BIG=<dir> to reuse the output
// of `node types.mjs <dir> 2.0,2.1,2.2 100000`); MVD_LANCEDB_BIG_FORMATS
// narrows the file formats (default all three).
func TestLanceDBTypesBig(t *testing.T) {
	v := os.Getenv("MVD_LANCEDB_BIG")
	if v == "" {
		t.Skip("set MVD_LANCEDB_BIG=1 to run the 100k-row variant")
	}
	out := v
	if st, err := os.Stat(v); err != nil || !st.IsDir() {
		// make test runs LanceDB's default format only (2.2): the three
		// together cost CI about five minutes; make bench runs all three.
		formats := os.Getenv("MVD_LANCEDB_BIG_FORMATS")
		if formats == "" {
			formats = "2.0,2.1,2.2"
		}
		out = generate(t, formats, "100000")
	}
	ents, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, e := range ents {
		name, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || !strings.HasSuffix(name, "_100000") {
			continue
		}
		checked++
		t.Run(name, func(t *testing.T) {
			checkTable(t, filepath.Join(out, "db", name+".lance"), filepath.Join(out, e.Name()))
		})
	}
	if checked == 0 {
		t.Fatalf("no 100k-row table in %s", out)
	}
}

// arrowSchemaOf maps a manifest's flattened field list to Arrow.
func arrowSchemaOf(fields []*tablepb.Field, md map[string][]byte) (*arrow.Schema, error) {
	s, err := format.NewSchema(fields, md)
	if err != nil {
		return nil, err
	}
	return s.Arrow()
}
