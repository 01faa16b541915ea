package sqlexpr

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/mvd-project/mvd/internal/lancedbtest"
)

// diffCase is one line of testdata/cases.txt.
type diffCase struct {
	line   int
	mode   byte // 'P' LanceDB and we agree, 'X' only we accept, 'R' both refuse, 'D' only LanceDB accepts, 'K' only LanceDB accepts (a known difference)
	approx bool // "P~": floats may differ by 1e-12 (transcendental functions)
	// "P!": the filter derived from the case is a known difference: LanceDB
	// accepts it, sqlexpr refuses it (README, "Differences from LanceDB").
	filterRefused bool
	filter        bool
	src           string
}

func readDiffCases(t *testing.T, file string) []diffCase {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []diffCase
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		mode, rest, _ := strings.Cut(line, " ")
		refused := strings.HasSuffix(mode, "!")
		mode = strings.TrimSuffix(mode, "!")
		approx := strings.HasSuffix(mode, "~")
		mode = strings.TrimSuffix(mode, "~")
		if len(mode) != 1 || !strings.Contains("PXRDK", mode) || rest == "" {
			t.Fatalf("%s:%d: want 'P|P~|X|R|D|K[!] <expr>', got %q", file, n, line)
		}
		c := diffCase{line: n, mode: mode[0], approx: approx, filterRefused: refused, src: strings.TrimSpace(rest)}
		if rest, ok := strings.CutPrefix(c.src, "WHERE "); ok {
			c.filter, c.src = true, rest
		}
		out = append(out, c)
	}
	return out
}

// lancedbHarness returns the directory of the Node harness, skipping the
// test when its dependencies are not installed (failing under CI).
func lancedbHarness(t testing.TB) string {
	t.Helper()
	lancedbtest.Require(t)
	return lancedbtest.HarnessDir(t)
}

type oracleResult struct {
	OK    bool   `json:"ok"`
	Error string `json:"error"`
	// From the same expression created as a materialized view.
	Inputs    []string `json:"inputs"`
	ViewError string   `json:"view_error"`
	ViewField *struct {
		Nullable bool `json:"nullable"`
	} `json:"view_field"`
	// The filter derived from a projection case (sqlcases.mjs filterFor)
	// and LanceDB's where() answer to it.
	Filter      string `json:"filter"`
	FilterOK    bool   `json:"filter_ok"`
	FilterError string `json:"filter_error"`
}

func readIPC(t *testing.T, mem memory.Allocator, file string) arrow.RecordBatch {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := ipc.NewFileReader(f, ipc.WithAllocator(mem))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var recs []arrow.RecordBatch
	for i := 0; i < r.NumRecords(); i++ {
		rec, err := r.RecordBatch(i)
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, rec)
	}
	tbl := array.NewTableFromRecords(r.Schema(), recs)
	defer tbl.Release()
	// One batch keeps comparisons simple; the tables are small.
	cols := make([]arrow.Array, tbl.NumCols())
	for i := range cols {
		chunks := tbl.Column(i).Data().Chunks()
		if len(chunks) == 0 {
			cols[i] = array.MakeArrayOfNull(mem, tbl.Schema().Field(i).Type, 0)
			continue
		}
		if len(chunks) == 1 {
			chunks[0].Retain()
			cols[i] = chunks[0]
			continue
		}
		c, err := array.Concatenate(chunks, mem)
		if err != nil {
			t.Fatal(err)
		}
		cols[i] = c
	}
	out := array.NewRecordBatch(tbl.Schema(), cols, tbl.NumRows())
	for _, c := range cols {
		c.Release()
	}
	return out
}

func TestDifferentialLanceDB(t *testing.T) {
	runDifferential(t, "cases.txt")
}

// TestDifferentialLanceDBZones runs cases_tz.txt over zoned timestamp
// columns (zonetable.mjs): literals, casts, date_part and date_trunc
// across DST transitions in zones with whole-hour and half-hour offsets.
func TestDifferentialLanceDBZones(t *testing.T) {
	runDifferential(t, "cases_tz.txt", "--zones")
}

func runDifferential(t *testing.T, file string, flags ...string) {
	dir := lancedbHarness(t)
	casesFile, err := filepath.Abs(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	cases := readDiffCases(t, casesFile)
	out := t.TempDir()
	// Reading the scripts makes `go test` caching depend on them too.
	for _, js := range []string{"sqlcases.mjs", "zonetable.mjs"} {
		if _, err := os.ReadFile(filepath.Join(dir, js)); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("node", append([]string{"sqlcases.mjs", casesFile, out, "--views"}, flags...)...)
	cmd.Dir = dir
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("node sqlcases.mjs: %v\n%s", err, msg)
	}
	raw, err := os.ReadFile(filepath.Join(out, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	var results []oracleResult
	if err := json.Unmarshal(raw, &results); err != nil {
		t.Fatal(err)
	}
	if len(results) != len(cases) {
		t.Fatalf("oracle answered %d cases, want %d", len(results), len(cases))
	}
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	data := withRowIDColumn(mem, readIPC(t, mem, filepath.Join(out, "data.arrow")))
	defer data.Release()
	for i, c := range cases {
		name := strings.ReplaceAll(c.src, "/", "÷")
		if c.filter {
			name = "WHERE " + name
		}
		t.Run(name, func(t *testing.T) {
			res := results[i]
			switch c.mode {
			case 'P':
				if !res.OK {
					t.Fatalf("line %d: LanceDB refused: %s", c.line, res.Error)
				}
				want := readIPC(t, mem, filepath.Join(out, strconv.Itoa(i)+".arrow"))
				defer want.Release()
				checkAgainstOracle(t, mem, c, data, want)
				checkViewDefinition(t, c, data.Schema(), res)
			case 'D':
				if !res.OK {
					t.Fatalf("line %d: LanceDB refused a case marked D: %s", c.line, res.Error)
				}
				if _, err := compileCase(c, data.Schema()); err == nil {
					t.Fatalf("line %d: we accept a case we should refuse", c.line)
				}
				if res.ViewError == "" {
					t.Fatalf("line %d: LanceDB creates a view over a case marked D", c.line)
				}
			case 'K':
				if !res.OK {
					t.Fatalf("line %d: LanceDB refused a case marked K: %s", c.line, res.Error)
				}
				if _, err := compileCase(c, data.Schema()); err == nil {
					t.Fatalf("line %d: we accept a case marked K (a known difference): update extensions.go and the case", c.line)
				}
			case 'X', 'R':
				if res.OK {
					t.Fatalf("line %d: LanceDB accepted a case marked %c", c.line, c.mode)
				}
				comp, err := compileCase(c, data.Schema())
				if c.mode == 'R' && err == nil {
					// Some refusals happen while evaluating (division by zero).
					var arr arrow.Array
					if arr, err = comp.EvalWith(mem, data); err == nil {
						arr.Release()
					}
				}
				if c.mode == 'X' && err != nil {
					t.Fatalf("line %d: we refuse an extension case: %v (LanceDB: %s)", c.line, err, res.Error)
				}
				if c.mode == 'R' && err == nil {
					t.Fatalf("line %d: we accept a case both should refuse (LanceDB: %s)", c.line, res.Error)
				}
			}
		})
		if !c.filter {
			t.Run(name+" AS FILTER", func(t *testing.T) {
				checkDerivedFilter(t, mem, c, data, results[i], filepath.Join(out, strconv.Itoa(i)+".f.arrow"))
			})
		}
	}
}

// checkDerivedFilter runs a projection case through the filter path: the
// filter LanceDB's where() was given (derived from the case by
// sqlcases.mjs) must keep the same rows in sqlexpr, or be refused by both.
// Extensions (X) may be accepted where LanceDB refuses; volatile functions
// (D) are refused where LanceDB accepts.
func checkDerivedFilter(t *testing.T, mem memory.Allocator, c diffCase, data arrow.RecordBatch, res oracleResult, wantFile string) {
	t.Helper()
	if res.Filter == "" {
		t.Fatalf("line %d: the oracle derived no filter", c.line)
	}
	f, err := CompileFilter(res.Filter, data.Schema())
	var sel []int
	if err == nil {
		sel, err = f.Selection(mem, data)
	}
	if c.filterRefused {
		if !res.FilterOK || err == nil {
			t.Fatalf("line %d: filter %s is marked as a known difference (!), but LanceDB accepts=%v and we accept=%v", c.line, res.Filter, res.FilterOK, err == nil)
		}
		return
	}
	switch {
	case !res.FilterOK && err == nil && c.mode != 'X':
		t.Fatalf("line %d: filter %s: we accept, LanceDB refuses: %s", c.line, res.Filter, res.FilterError)
	case !res.FilterOK:
		return
	case c.mode == 'D':
		if err == nil {
			t.Fatalf("line %d: filter %s: we accept a volatile filter", c.line, res.Filter)
		}
		return
	case err != nil:
		t.Fatalf("line %d: filter %s: we refuse, LanceDB accepts: %v", c.line, res.Filter, err)
	}
	want := readIPC(t, mem, wantFile)
	defer want.Release()
	ids := make([]int64, len(sel))
	idCol := data.Column(0).(*array.Int64)
	for k, r := range sel {
		ids[k] = idCol.Value(r)
	}
	if wantIDs := int64s(want); !equalInts(ids, wantIDs) {
		t.Fatalf("line %d: filter %s: rows %v, LanceDB %v", c.line, res.Filter, ids, wantIDs)
	}
}

func compileCase(c diffCase, schema *arrow.Schema) (*Compiled, error) {
	if c.filter {
		return CompileFilterWithRowIDs(c.src, schema)
	}
	return CompileSQL(c.src, schema)
}

// withRowIDColumn appends the _rowid and _rowaddr columns LanceDB's
// where() reads: on the harness's fresh one-fragment table with stable
// row ids, both are the row's position.
func withRowIDColumn(mem memory.Allocator, rec arrow.RecordBatch) arrow.RecordBatch {
	defer rec.Release()
	b := array.NewUint64Builder(mem)
	defer b.Release()
	for i := int64(0); i < rec.NumRows(); i++ {
		b.Append(uint64(i))
	}
	ids := b.NewArray()
	defer ids.Release()
	fields := append(rec.Schema().Fields(),
		arrow.Field{Name: RowIDColumn, Type: arrow.PrimitiveTypes.Uint64},
		arrow.Field{Name: RowAddrColumn, Type: arrow.PrimitiveTypes.Uint64})
	md := rec.Schema().Metadata()
	// One fragment: the row address is the position too.
	return array.NewRecordBatch(arrow.NewSchema(fields, &md), append(rec.Columns(), ids, ids), rec.NumRows())
}

// rowOnlyTwin compiles the same expression without vectorized kernels.
func rowOnlyTwin(t *testing.T, c *Compiled) *Compiled {
	t.Helper()
	twin, err := compile(c.Expr(), c.schema, true)
	if err != nil {
		t.Fatalf("row-only compile: %v", err)
	}
	return twin
}

func checkAgainstOracle(t *testing.T, mem memory.Allocator, c diffCase, data, want arrow.RecordBatch) {
	t.Helper()
	comp, err := compileCase(c, data.Schema())
	if err != nil {
		t.Fatalf("line %d: compile: %v", c.line, err)
	}
	got, err := comp.EvalWith(mem, data)
	if err != nil {
		t.Fatalf("line %d: eval: %v", c.line, err)
	}
	defer got.Release()
	rowGot, err := rowOnlyTwin(t, comp).EvalWith(mem, data)
	if err != nil {
		t.Fatalf("line %d: row-only eval: %v", c.line, err)
	}
	defer rowGot.Release()
	if !array.ApproxEqual(got, rowGot, array.WithNaNsEqual(true), array.WithAbsTolerance(0)) {
		t.Fatalf("line %d: vectorized and row paths differ\n vec %v\n row %v", c.line, got, rowGot)
	}
	// Evaluating a slice of the batch gives the slice of the result
	// (offsets in every buffer are honoured).
	if data.NumRows() > 4 {
		part := data.NewSlice(3, data.NumRows()-1)
		defer part.Release()
		gotPart, err := comp.EvalWith(mem, part)
		if err != nil {
			t.Fatalf("line %d: eval on a slice: %v", c.line, err)
		}
		defer gotPart.Release()
		wantPart := array.NewSlice(got, 3, data.NumRows()-1)
		defer wantPart.Release()
		if !array.ApproxEqual(gotPart, wantPart, array.WithNaNsEqual(true), array.WithAbsTolerance(0)) {
			t.Fatalf("line %d: sliced input gives\n %v\nwant %v", c.line, gotPart, wantPart)
		}
	}
	empty := data.NewSlice(0, 0)
	defer empty.Release()
	none, err := comp.EvalWith(mem, empty)
	if err != nil {
		t.Fatalf("line %d: eval on no rows: %v", c.line, err)
	}
	if none.Len() != 0 || !arrow.TypeEqual(none.DataType(), comp.OutputType()) {
		t.Fatalf("line %d: no rows gave %d values of %s", c.line, none.Len(), none.DataType())
	}
	none.Release()
	if c.filter {
		var ids []int64
		idCol := data.Column(0).(*array.Int64)
		sel := got.(*array.Boolean)
		for r := 0; r < sel.Len(); r++ {
			if sel.IsValid(r) && sel.Value(r) {
				ids = append(ids, idCol.Value(r))
			}
		}
		wantIDs := int64s(want)
		if len(ids) != len(wantIDs) || (len(ids) > 0 && !equalInts(ids, wantIDs)) {
			t.Fatalf("line %d: rows %v, LanceDB %v", c.line, ids, wantIDs)
		}
		return
	}
	wantField := want.Schema().Field(1)
	if !arrow.TypeEqual(comp.OutputType(), wantField.Type) {
		t.Fatalf("line %d: type %s, LanceDB %s", c.line, comp.OutputType(), wantField.Type)
	}
	if comp.Nullable() != wantField.Nullable {
		t.Errorf("line %d: nullable %v, LanceDB %v", c.line, comp.Nullable(), wantField.Nullable)
	}
	if wantIDs := int64s(want); int64(len(wantIDs)) != data.NumRows() {
		t.Fatalf("line %d: LanceDB returned %d rows of %d", c.line, len(wantIDs), data.NumRows())
	}
	opts := []array.EqualOption{array.WithNaNsEqual(true), array.WithAbsTolerance(0)}
	if c.approx {
		opts = []array.EqualOption{array.WithNaNsEqual(true), array.WithAbsTolerance(1e-12)}
	}
	if !array.ApproxEqual(got, want.Column(1), opts...) {
		t.Fatalf("line %d: values\n got %v\nwant %v", c.line, got, want.Column(1))
	}
}

func equalInts(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func int64s(rec arrow.RecordBatch) []int64 {
	if rec.NumCols() == 0 {
		return nil // LanceDB returns an empty table without schema for no rows
	}
	ints := rec.Column(0).(*array.Int64)

	out := make([]int64, ints.Len())
	for i := range out {
		out[i] = ints.Value(i)
	}
	return out
}

// checkViewDefinition compares the `inputs` LanceDB stored for the case
// created as a view, and the view column's nullability, with ours.
func checkViewDefinition(t *testing.T, c diffCase, schema *arrow.Schema, res oracleResult) {
	t.Helper()
	comp, err := compileCase(c, schema)
	if err != nil {
		t.Fatal(err)
	}
	if comp.ReadsRowIDs() {
		// A view cannot filter on row ids: LanceDB refuses it, and so
		// does CompileFilter against the source schema (without _rowid).
		if !strings.Contains(res.ViewError, "unknown column '_row") {
			t.Fatalf("line %d: LanceDB's view over a row-id filter: %q", c.line, res.ViewError)
		}
		src := withoutField(withoutField(schema, RowIDColumn), RowAddrColumn)
		if _, err := CompileFilter(c.src, src); !errors.Is(err, ErrUnknownColumn) || !strings.Contains(err.Error(), "unknown column '_row") {
			t.Fatalf("line %d: a view filter on row ids compiles: %v", c.line, err)
		}
		return
	}
	if res.ViewError != "" {
		t.Fatalf("line %d: LanceDB refused the view: %s", c.line, res.ViewError)
	}
	inputs := comp.Inputs()
	if c.filter {
		// The filter view also projects `id`.
		inputs = mergeInputs(inputs, []string{"id"})
	}
	if !reflect.DeepEqual(inputs, res.Inputs) && !(len(inputs) == 0 && len(res.Inputs) == 0) {
		t.Errorf("line %d: inputs %q, LanceDB %q", c.line, inputs, res.Inputs)
	}
	if !c.filter && res.ViewField != nil && comp.ViewNullable() != res.ViewField.Nullable {
		t.Errorf("line %d: view column nullable %v, LanceDB %v", c.line, comp.ViewNullable(), res.ViewField.Nullable)
	}
}

func withoutField(s *arrow.Schema, name string) *arrow.Schema {
	var fields []arrow.Field
	for _, f := range s.Fields() {
		if f.Name != name {
			fields = append(fields, f)
		}
	}
	md := s.Metadata()
	return arrow.NewSchema(fields, &md)
}

func mergeInputs(a, b []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range append(append([]string{}, a...), b...) {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	sort.Strings(out)
	return out
}
