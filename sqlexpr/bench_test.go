package sqlexpr

import (
	"context"
	"encoding/json"
	"os/exec"
	"strconv"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/mvd-project/mvd/internal/lancedbtest"
)

const benchRows = 1_000_000

// benchData builds the benchmark table with the formulas of
// testdata/lancedb/sqlbench.mjs.
func benchData(mem memory.Allocator, rows int) arrow.RecordBatch {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: tInt64},
		{Name: "user", Type: tUtf8, Nullable: true},
		{Name: "kind", Type: tUtf8, Nullable: true},
		{Name: "amount", Type: tFloat64, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	ids := b.Field(0).(*array.Int64Builder)
	users := b.Field(1).(*array.StringBuilder)
	kinds := b.Field(2).(*array.StringBuilder)
	amounts := b.Field(3).(*array.Float64Builder)
	names := []string{"purchase", "refund", "view"}
	for i := 0; i < rows; i++ {
		ids.Append(int64(i))
		users.Append("user" + strconv.Itoa(i%1000))
		kinds.Append(names[i%3])
		if i%97 == 0 {
			amounts.AppendNull()
		} else {
			amounts.Append(float64(i%1000) / 4)
		}
	}
	return b.NewRecordBatch()
}

// filterProject runs the benchmark query: evaluate the filter, keep the
// matching rows of the columns the projections read, then compute the
// three projections over them.
func filterProject(b *testing.B, mem memory.Allocator, rec arrow.RecordBatch, filter *Compiled, projs []*Compiled) int {
	var fields []arrow.Field
	var cols []arrow.Array
	seen := map[string]bool{}
	for _, p := range projs {
		for _, name := range p.Inputs() {
			if !seen[name] {
				seen[name] = true
				i := rec.Schema().FieldIndices(name)[0]
				fields = append(fields, rec.Schema().Field(i))
				cols = append(cols, rec.Column(i))
			}
		}
	}
	mask, err := filter.EvalWith(mem, rec)
	if err != nil {
		b.Fatal(err)
	}
	defer mask.Release()
	inputs := array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, rec.NumRows())
	defer inputs.Release()
	ctx := compute.WithAllocator(context.Background(), mem)
	kept, err := compute.FilterRecordBatch(ctx, inputs, mask, compute.DefaultFilterOptions())
	if err != nil {
		b.Fatal(err)
	}
	defer kept.Release()
	for _, p := range projs {
		arr, err := p.EvalWith(mem, kept)
		if err != nil {
			b.Fatal(err)
		}
		arr.Release()
	}
	return int(kept.NumRows())
}

func benchCompile(b *testing.B, schema *arrow.Schema, rowOnly bool) (*Compiled, []*Compiled) {
	parse := func(src string) *Compiled {
		e, err := Parse(src)
		if err != nil {
			b.Fatal(err)
		}
		c, err := compile(e, schema, rowOnly)
		if err != nil {
			b.Fatal(err)
		}
		return c
	}
	filter := parse("kind = 'purchase' AND amount > 10")
	return filter, []*Compiled{parse("id"), parse("user"), parse("amount * 100")}
}

// BenchmarkFilterProject1M times `kind = 'purchase' AND amount > 10` with
// projection `id, user, amount * 100 AS amount_cents` over 1M rows, and
// LanceDB's query on the same data in the same run (when the Node
// harness is installed). The LanceDB figure includes reading its table
// from disk (page cache), ours starts from Arrow arrays in memory.
func BenchmarkFilterProject1M(b *testing.B) {
	mem := memory.NewGoAllocator()
	rec := benchData(mem, benchRows)
	defer rec.Release()
	var lancedbMs float64
	if dir := lancedbHarnessDir(); dir != "" {
		cmd := exec.Command("node", "sqlbench.mjs", strconv.Itoa(benchRows), "5")
		cmd.Dir = dir
		out, err := cmd.Output()
		if err != nil {
			b.Fatalf("node sqlbench.mjs: %v", err)
		}
		var res struct {
			RowsOut    int     `json:"rows_out"`
			MsPerQuery float64 `json:"ms_per_query"`
		}
		if err := json.Unmarshal(out, &res); err != nil {
			b.Fatalf("sqlbench output %q: %v", out, err)
		}
		lancedbMs = res.MsPerQuery
		filter, projs := benchCompile(b, rec.Schema(), false)
		if got := filterProject(b, mem, rec, filter, projs); got != res.RowsOut {
			b.Fatalf("mvd keeps %d rows, LanceDB %d: the benchmark data differ", got, res.RowsOut)
		}
		b.Logf("LanceDB 0.39 query: %.1f ms/op, %d rows", res.MsPerQuery, res.RowsOut)
	}
	for _, mode := range []struct {
		name    string
		rowOnly bool
	}{{"vectorized", false}, {"rowpath", true}} {
		b.Run(mode.name, func(b *testing.B) {
			filter, projs := benchCompile(b, rec.Schema(), mode.rowOnly)
			var rows int
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				rows = filterProject(b, mem, rec, filter, projs)
			}
			b.StopTimer()
			msPerOp := float64(b.Elapsed().Nanoseconds()) / float64(b.N) / 1e6
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/benchRows, "ns/row")
			if lancedbMs > 0 {
				b.ReportMetric(lancedbMs/msPerOp, "x_lancedb")
				b.Logf("%s: %.1f ms/op (%d rows kept) vs LanceDB %.1f ms/op: %.2fx", mode.name, msPerOp, rows, lancedbMs, lancedbMs/msPerOp)
			}
		})
	}
}

// BenchmarkRowPath times the expr-lang row path alone for one
// expression, reported per row.
func BenchmarkRowPath(b *testing.B) {
	mem := memory.NewGoAllocator()
	rec := benchData(mem, 100_000)
	defer rec.Release()
	for _, src := range []string{"amount * 100", "kind = 'purchase' AND amount > 10", "upper(user)"} {
		b.Run(src, func(b *testing.B) {
			e, err := Parse(src)
			if err != nil {
				b.Fatal(err)
			}
			c, err := compile(e, rec.Schema(), true)
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				arr, err := c.EvalWith(mem, rec)
				if err != nil {
					b.Fatal(err)
				}
				arr.Release()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(rec.NumRows()), "ns/row")
		})
	}
}

// lancedbHarnessDir is the Node harness directory, or "" when it is not
// installed (benchmarks then report Go figures only).
func lancedbHarnessDir() string {
	if ok, _ := lancedbtest.Available(); !ok {
		return ""
	}
	return "../testdata/lancedb"
}
