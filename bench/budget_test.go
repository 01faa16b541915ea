package bench

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/lance/datawriter"
	"github.com/mvd-project/mvd/vfs"
)

// budgetSchema is the budget benchmark's source: scalar columns of every
// kind the views read, and a 64-float embedding (256 bytes a row).
var budgetSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "user", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "kind", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "amount", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	{Name: "ts", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "flag", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
	{Name: "embedding", Type: arrow.FixedSizeListOf(64, arrow.PrimitiveTypes.Float32), Nullable: true},
}, nil)

// writeBudgetSource writes rows rows of budgetSchema as table src of the
// database dir, streaming (the writer holds a page per column).
func writeBudgetSource(tb testing.TB, dir string, rows int64) {
	tb.Helper()
	ls, err := lance.NewSchemaFromArrow(budgetSchema)
	if err != nil {
		tb.Fatal(err)
	}
	root := filepath.Join(dir, "src"+lance.TableSuffix)
	w := datawriter.NewFragmentWriter(vfs.OS(), root, ls, "2.2")
	kinds := []string{"purchase", "refund", "view", "click"}
	const batch = 8192
	for lo := int64(0); lo < rows; lo += batch {
		hi := min(rows, lo+batch)
		b := array.NewRecordBuilder(memory.DefaultAllocator, budgetSchema)
		emb := b.Field(6).(*array.FixedSizeListBuilder)
		ev := emb.ValueBuilder().(*array.Float32Builder)
		for i := lo; i < hi; i++ {
			b.Field(0).(*array.Int64Builder).Append(i)
			b.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("user-%06d", i%100_000))
			b.Field(2).(*array.StringBuilder).Append(kinds[i%4])
			b.Field(3).(*array.Float64Builder).Append(float64(i%1000) / 10)
			b.Field(4).(*array.Int64Builder).Append(1_700_000_000_000 + i)
			b.Field(5).(*array.BooleanBuilder).Append(i%3 == 0)
			emb.Append(true)
			for k := range int64(64) {
				ev.Append(float32((i*31+k)%997) / 997)
			}
		}
		rec := b.NewRecordBatch()
		b.Release()
		err := w.Write(rec)
		rec.Release()
		if err != nil {
			tb.Fatal(err)
		}
	}
	frags, err := w.Finish()
	if err != nil {
		tb.Fatal(err)
	}
	if _, _, err := lance.Create(context.Background(), vfs.OS(), root, lance.CreateOptions{Schema: ls, Fragments: frags}); err != nil {
		tb.Fatal(err)
	}
}

// childRun is one mvd command's cost, measured by the kernel: its peak
// RSS (rusage maxrss), CPU time (user + system) and wall time.
type childRun struct {
	name           string
	wall, cpu      time.Duration
	maxRSS         int64 // bytes
	floor          int64 // this process's RSS when it started the child
	stdout, stderr string
	err            error
}

func (r childRun) cores() float64 { return r.cpu.Seconds() / r.wall.Seconds() }

// runChild runs bin with args and measures it.
func runChild(tb testing.TB, name, bin string, args ...string) childRun {
	tb.Helper()
	// The child's maxrss starts from this process's high-water mark, which
	// is reset to the current RSS first (memory freed, /proc clear_refs).
	floor, _ := rssMark()
	cmd := exec.Command(bin, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	t0 := time.Now()
	err := cmd.Run()
	r := childRun{name: name, wall: time.Since(t0), stdout: out.String(), stderr: errb.String(), err: err, floor: floor}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		r.maxRSS = ru.Maxrss * 1024 // kilobytes on Linux
		r.cpu = time.Duration(syscall.TimevalToNsec(ru.Utime) + syscall.TimevalToNsec(ru.Stime))
	}
	return r
}

// BenchmarkBudget measures the resource budgets of a refresh on a full
// rebuild of an identity view (every column, with its 64-float embedding)
// of a 1M-row source (MVD_BENCH_BUDGET_ROWS to change), each rebuild a
// child `mvd view refresh --full` process measured by the kernel:
// uncapped; memory_bytes = 64 MiB; cpu_millis = 1000; both. It fails if
// the 64 MiB rebuild's peak RSS is over 64 MiB + 150 MiB or not well under
// the uncapped one's (unless it fails saying how much it needs), or if
// cpu_millis = 1000 uses more than about one core.
func BenchmarkBudget(b *testing.B) {
	rows := int64(envInt("MVD_BENCH_BUDGET_ROWS", 1_000_000))
	bin := buildMVD(b)
	dir := budgetDir(b)
	// The source is written by a child process: a child's rusage maxrss
	// starts from its parent's peak RSS (Linux records the pre-exec
	// memory's high-water mark, and Go's fork shares the parent's), so
	// this process must stay small for the children's peaks to be theirs.
	helper := exec.Command(os.Args[0], "-test.run=^TestBudgetSourceHelper$", "-test.count=1")
	helper.Env = append(os.Environ(), "MVD_BUDGET_SOURCE_DIR="+dir, fmt.Sprintf("MVD_BENCH_BUDGET_ROWS=%d", rows))
	if out, err := helper.CombinedOutput(); err != nil {
		b.Fatalf("write the source: %v\n%s", err, out)
	}
	if r := runChild(b, "create", bin, "view", "create", "--db", dir, "v", "--source", "src"); r.err != nil {
		b.Fatalf("create: %v %s", r.err, r.stderr)
	}
	const mib = 1 << 20
	budget := func(cpu, mem int64) []string {
		return []string{"--cpu-millis", fmt.Sprint(cpu), "--memory-bytes", fmt.Sprint(mem), "--gpu-count", "0"}
	}
	cases := []struct {
		name  string
		flags []string
	}{
		{"uncapped", nil},
		{"memory-64MiB", budget(64_000, 64*mib)},
		{"cpu-1000", budget(1000, 1<<40)},
		{"cpu-1000+memory-64MiB", budget(1000, 64*mib)},
	}
	var runs []childRun
	var floor int64
	b.ResetTimer()
	for range b.N {
		runs = runs[:0]
		for _, c := range cases {
			args := append([]string{"view", "refresh", "--db", dir, "v", "--full", "--json"}, c.flags...)
			r := runChild(b, c.name, bin, args...)
			if r.err != nil && !strings.Contains(r.stderr, "needs at least memory_bytes") {
				b.Fatalf("%s: %v %s", c.name, r.err, r.stderr)
			}
			runs = append(runs, r)
		}
	}
	b.StopTimer()
	base := runs[0]
	for _, r := range runs {
		floor = max(floor, r.floor)
	}
	var tbl strings.Builder
	fmt.Fprintf(&tbl, "full rebuild of a %d-row view (every column, 64-float embedding) in %s, one child process each (this process's RSS, a floor of the children's: %.1f MiB):\n", rows, dir, float64(floor)/mib)
	fmt.Fprintf(&tbl, "%-24s %9s %9s %7s %12s %10s\n", "budget", "wall s", "cpu s", "cores", "peak RSS MiB", "wall/uncapped")
	for _, r := range runs {
		note := ""
		if r.err != nil {
			note = "  failed: " + strings.TrimSpace(r.stderr)
		}
		fmt.Fprintf(&tbl, "%-24s %9.2f %9.2f %7.2f %12.1f %10.2fx%s\n", r.name, r.wall.Seconds(), r.cpu.Seconds(), r.cores(),
			float64(r.maxRSS)/mib, r.wall.Seconds()/base.wall.Seconds(), note)
		b.ReportMetric(float64(r.maxRSS)/mib, r.name+"-rss-MiB")
		b.ReportMetric(r.cores(), r.name+"-cores")
		b.ReportMetric(r.wall.Seconds(), r.name+"-s")
	}
	b.Log("\n" + tbl.String())
	mem, cpu := runs[1], runs[2]
	if base.maxRSS <= floor {
		b.Errorf("the uncapped rebuild's peak RSS (%.1f MiB) is not above this process's (%.1f MiB): not measured", float64(base.maxRSS)/mib, float64(floor)/mib)
	}
	if mem.err == nil {
		if mem.maxRSS > 64*mib+150*mib {
			b.Errorf("memory_bytes = 64 MiB: peak RSS %.1f MiB, over 64 MiB + 150 MiB", float64(mem.maxRSS)/mib)
		}
		if float64(mem.maxRSS) > 0.75*float64(base.maxRSS) {
			b.Errorf("memory_bytes = 64 MiB: peak RSS %.1f MiB, not well under the uncapped %.1f MiB", float64(mem.maxRSS)/mib, float64(base.maxRSS)/mib)
		}
	}
	if cpu.cores() > 1.2 {
		b.Errorf("cpu_millis = 1000: %.2f cores (CPU time / wall time), want about one", cpu.cores())
	}
}

// TestBudgetSourceHelper writes BenchmarkBudget's source in a process of
// its own (MVD_BUDGET_SOURCE_DIR set); it skips otherwise.
func TestBudgetSourceHelper(t *testing.T) {
	dir := os.Getenv("MVD_BUDGET_SOURCE_DIR")
	if dir == "" {
		t.Skip("BenchmarkBudget's helper")
	}
	writeBudgetSource(t, dir, int64(envInt("MVD_BENCH_BUDGET_ROWS", 1_000_000)))
}

// budgetDir is where BenchmarkBudget's database lives: MVD_BENCH_BUDGET_DIR,
// or a directory on /dev/shm when there is one (the rebuilds are then
// bound by CPU rather than by the disk's syncs, so that the CPU cap shows),
// or the benchmarks' work directory; it is removed at the end.
func budgetDir(b *testing.B) string {
	parent := os.Getenv("MVD_BENCH_BUDGET_DIR")
	if parent == "" {
		parent = workDir
		if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
			parent = "/dev/shm"
		}
	}
	dir, err := os.MkdirTemp(parent, "mvd-budget-")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}
