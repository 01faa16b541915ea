package matview

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/mvd-project/mvd/vfs"
)

func bInt(n int64) *int64 { return &n }

func bStr(s string) *string { return &s }

// TestBudgetRules checks LanceDB Enterprise's budget rules, and that a
// refused budget leaves the view as it was (no commit, no version).
func TestBudgetRules(t *testing.T) {
	ok := []Budget{
		{},
		{GPUCount: bInt(0)},
		{CPUMillis: bInt(1000), MemoryBytes: bInt(1 << 30), GPUCount: bInt(0)},
		{CPUMillis: bInt(1), MemoryBytes: bInt(0), GPUCount: bInt(0)},
	}
	for _, b := range ok {
		if err := b.Validate(); err != nil {
			t.Errorf("%v: %v", b, err)
		}
	}
	bad := []struct {
		b    Budget
		kind error
		want string
	}{
		{Budget{CPUMillis: bInt(-1), MemoryBytes: bInt(1), GPUCount: bInt(0)}, ErrBudget, "cpu_millis must not be negative"},
		{Budget{CPUMillis: bInt(1), MemoryBytes: bInt(-5), GPUCount: bInt(0)}, ErrBudget, "memory_bytes must not be negative"},
		{Budget{GPUCount: bInt(-1)}, ErrBudget, "gpu_count must not be negative"},
		{Budget{CPUMillis: bInt(1000)}, ErrBudget, "missing memory_bytes, gpu_count"},
		{Budget{MemoryBytes: bInt(1 << 20)}, ErrBudget, "missing cpu_millis, gpu_count"},
		{Budget{CPUMillis: bInt(1000), MemoryBytes: bInt(1 << 20)}, ErrBudget, "missing gpu_count"},
		{Budget{CPUMillis: bInt(0), MemoryBytes: bInt(1 << 20), GPUCount: bInt(0)}, ErrBudget, "cpu_millis = 0"},
		{Budget{GPUCount: bInt(1)}, ErrGPU, "GPU"},
		{Budget{GPUClass: bStr("a100")}, ErrGPU, "GPU"},
		{Budget{GPUClass: bStr("")}, ErrGPU, "GPU"},
		{Budget{CPUMillis: bInt(1000), MemoryBytes: bInt(1 << 20), GPUCount: bInt(2)}, ErrGPU, "GPU"},
	}
	ctx := context.Background()
	dir := t.TempDir()
	newGoSource(t, vfs.OS(), dir, "src", 50)
	db := openDB(t, dir)
	if _, err := db.CreateView(ctx, "v", "src", Definition{}); err != nil {
		t.Fatal(err)
	}
	v, err := db.OpenView(ctx, "v")
	if err != nil {
		t.Fatal(err)
	}
	before, err := v.Table().Latest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range bad {
		err := c.b.Validate()
		if !errors.Is(err, c.kind) || err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %v naming %q", c.b, err, c.kind, c.want)
		}
		wantClass := ErrInvalid
		if c.kind == ErrGPU {
			wantClass = ErrUnsupported
		}
		if !errors.Is(err, wantClass) {
			t.Errorf("%v: %v is not %v", c.b, err, wantClass)
		}
		if _, err := v.Refresh(ctx, RefreshOptions{Full: true, Budget: c.b}); !errors.Is(err, c.kind) {
			t.Errorf("refresh with %v: %v, want %v", c.b, err, c.kind)
		}
	}
	after, err := v.Table().Latest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if after.Version != before.Version {
		t.Fatalf("refused budgets changed the view: version %d -> %d", before.Version, after.Version)
	}
}

func TestBudgetWorkers(t *testing.T) {
	for _, c := range []struct {
		ms   *int64
		want int
	}{{nil, 0}, {bInt(1), 1}, {bInt(1000), 1}, {bInt(1001), 2}, {bInt(8000), 8}} {
		if got := (Budget{CPUMillis: c.ms}).Workers(); got != c.want {
			t.Errorf("Workers(%v) = %d, want %d", c.ms, got, c.want)
		}
	}
}

// budgetSource makes a source of 2 fragments of 66k rows (so that an
// uncapped rebuild scans them on two workers: jobs are 64k rows) and view
// "v" over it.
func budgetSource(t *testing.T) (*DB, *goSource) {
	t.Helper()
	dir := t.TempDir()
	src := newGoSource(t, vfs.OS(), dir, "src", 66_000)
	src.append(t, 66_000, 132_000)
	db := openDB(t, dir)
	if _, err := db.CreateView(context.Background(), "v", "src", Definition{Where: "amount >= 10"}); err != nil {
		t.Fatal(err)
	}
	return db, src
}

func cpuBudget(ms int64) Budget {
	return Budget{CPUMillis: bInt(ms), MemoryBytes: bInt(1 << 30), GPUCount: bInt(0)}
}

// TestBudgetWorkerCap checks that cpu_millis caps the workers a refresh
// runs at once, counted by the refresh's limiter (every fan-out takes its
// goroutines' tokens there), for a rebuild and an incremental refresh.
func TestBudgetWorkerCap(t *testing.T) {
	ctx := context.Background()
	db, src := budgetSource(t)
	v, err := db.OpenView(ctx, "v")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		ms   int64
		want int
	}{{1000, 1}, {2000, 2}} {
		seen := watchWorkers(t, func() {
			if _, err := v.Refresh(ctx, RefreshOptions{Full: true, Budget: cpuBudget(c.ms)}); err != nil {
				t.Error(err)
			}
		})
		if v.budgetPeak != c.want {
			t.Errorf("cpu_millis %d: %d workers ran at once, want %d", c.ms, v.budgetPeak, c.want)
		}
		if seen > c.want {
			t.Errorf("cpu_millis %d: %d worker goroutines seen at once (the caller's included), want at most %d", c.ms, seen, c.want)
		}
	}
	// Uncapped, the same rebuild fans out: the watch would see a broken cap.
	if seen := watchWorkers(t, func() {
		if _, err := v.Refresh(ctx, RefreshOptions{Full: true}); err != nil {
			t.Error(err)
		}
	}); seen < 2 && runtime.GOMAXPROCS(0) > 1 {
		t.Errorf("uncapped rebuild: at most %d worker goroutines seen; the watch sees none", seen)
	}
	src.append(t, 132_000, 134_000)
	r, err := v.Refresh(ctx, RefreshOptions{Budget: cpuBudget(1000)})
	if err != nil || r.Mode != ModeIncremental {
		t.Fatalf("incremental refresh under a budget: %+v, %v", r, err)
	}
	if v.budgetPeak != 1 {
		t.Errorf("incremental refresh at cpu_millis 1000: %d workers ran at once", v.budgetPeak)
	}
	checkView(t, db, "v")
}

// TestBudgetTooSmall checks that a rebuild that cannot fit its memory
// budget fails before any work, saying how much it needs, and commits
// and writes nothing; a budget of what it said is enough.
func TestBudgetTooSmall(t *testing.T) {
	ctx := context.Background()
	db, _ := budgetSource(t)
	v, err := db.OpenView(ctx, "v")
	if err != nil {
		t.Fatal(err)
	}
	before, err := v.Table().Latest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	small := Budget{CPUMillis: bInt(2000), MemoryBytes: bInt(64 << 10), GPUCount: bInt(0)}
	_, err = v.Refresh(ctx, RefreshOptions{Budget: small})
	var ob *OverBudgetError
	if !errors.As(err, &ob) || !errors.Is(err, ErrOverBudget) {
		t.Fatalf("refresh within 64 KiB: %v, want an OverBudgetError", err)
	}
	if ob.Resource != "memory_bytes" || ob.Need <= ob.Have || !strings.Contains(err.Error(), "needs at least memory_bytes = ") {
		t.Fatalf("over-budget error %+v: %v", ob, err)
	}
	after, err := v.Table().Latest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if after.Version != before.Version {
		t.Fatalf("a refresh over budget committed: version %d -> %d", before.Version, after.Version)
	}
	if ents, err := os.ReadDir(filepath.Join(v.Table().Root(), "data")); err == nil && len(ents) > 0 {
		t.Fatalf("a refresh over budget left %d data files", len(ents))
	}
	enough := Budget{CPUMillis: bInt(2000), MemoryBytes: bInt(ob.Need), GPUCount: bInt(0)}
	if _, err := v.Refresh(ctx, RefreshOptions{Budget: enough}); err != nil {
		t.Fatalf("refresh within the %d bytes it said it needs: %v", ob.Need, err)
	}
	checkView(t, db, "v")
}

// TestBudgetViewDefault checks the view's stored default budget: applied
// with ViewBudget (the daemon's auto-refreshes), not otherwise, and an
// explicit budget wins.
func TestBudgetViewDefault(t *testing.T) {
	ctx := context.Background()
	db, _ := budgetSource(t)
	v, err := db.OpenView(ctx, "v")
	if err != nil {
		t.Fatal(err)
	}
	tiny := Budget{CPUMillis: bInt(1000), MemoryBytes: bInt(1024), GPUCount: bInt(0)}
	if _, err := v.SetMetadata(ctx, tiny.Metadata()); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Refresh(ctx, RefreshOptions{ViewBudget: true}); !errors.Is(err, ErrOverBudget) {
		t.Fatalf("auto-refresh with a 1 KiB default: %v, want ErrOverBudget", err)
	}
	if _, err := v.Refresh(ctx, RefreshOptions{ViewBudget: true, Budget: cpuBudget(1000)}); err != nil {
		t.Fatalf("explicit budget over the default: %v", err)
	}
	if v.budgetPeak != 1 {
		t.Fatalf("explicit cpu_millis 1000: peak %d", v.budgetPeak)
	}
	got, err := BudgetFromMetadata(tiny.Metadata())
	if err != nil || got.String() != tiny.String() {
		t.Fatalf("round trip: %v, %v", got, err)
	}
	if _, err := BudgetFromMetadata(map[string]string{KeyGPUCount: "2"}); !errors.Is(err, ErrGPU) {
		t.Fatalf("stored gpu_count 2: %v", err)
	}
}

// workerCreators are the functions that start a refresh's worker
// goroutines (decode, evaluate, encode, side work beside the commit), as
// goroutine dumps name them ("created by …").
var workerCreators = []string{
	"mvd/rebuild.runFragments",
	"mvd/internal/budget.ForEach",
	"mvd/internal/budget.Go",
	"sourcegraph/conc",
	"mvd/lance/datawriter.(*FragmentWriter).start",
	"mvd/matview.(*attempt).",
}

// isDispatcher reports whether the goroutine of dump g is the rebuild's
// dispatcher: running dispatchFragments, or not yet started, when its
// stack is the compiler's wrapper of the go statement that starts it.
func isDispatcher(g string) bool {
	return strings.Contains(g, "rebuild.dispatchFragments") || strings.Contains(g, "rebuild.runFragments.gowrap")
}

// watchWorkers runs f while sampling the goroutine dump, and returns the
// most worker goroutines seen at once plus one (f's own goroutine): an
// independent count of the refresh's workers, not the limiter's.
func watchWorkers(t *testing.T, f func()) int {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	most := 0
	buf := make([]byte, 1<<20)
	for {
		select {
		case <-done:
			return most + 1
		default:
		}
		n := runtime.Stack(buf, true)
		for n == len(buf) {
			buf = make([]byte, 2*len(buf))
			n = runtime.Stack(buf, true)
		}
		count := 0
		var what []string
		for _, g := range strings.Split(string(buf[:n]), "\n\n") {
			i := strings.Index(g, "\ncreated by ")
			if i < 0 || isDispatcher(g) {
				continue // the rebuild's dispatcher only hands out jobs
			}
			by := g[i:]
			for _, c := range workerCreators {
				if strings.Contains(by, c) {
					count++
					what = append(what, g)
					break
				}
			}
		}
		if count > most {
			most = count
			if os.Getenv("MVD_DEBUG_WORKERS") != "" {
				t.Logf("%d workers:\n%s", count, strings.Join(what, "\n\n"))
			}
		}
	}
}
