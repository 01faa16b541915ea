package matview

import (
	"context"
	"errors"
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
