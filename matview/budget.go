package matview

import (
	"errors"
	"fmt"
)

// Budget sentinels. A refused budget wraps ErrBudget and ErrInvalid (a GPU
// request: ErrGPU and ErrUnsupported instead); a refresh that cannot run
// within its budget wraps ErrOverBudget (errors.As with *OverBudgetError
// says how much it needs).
var (
	// ErrBudget means a resource budget that breaks LanceDB Enterprise's
	// rules: a negative value, or CPU or memory without all three of
	// cpu_millis, memory_bytes and gpu_count.
	ErrBudget = errors.New("invalid resource budget")
	// ErrGPU means a budget asking for a GPU (gpu_count > 0 or any
	// gpu_class): no refresh here runs on a GPU.
	ErrGPU = errors.New("GPU budgets are not supported")
	// ErrOverBudget means the refresh cannot run within its budget; nothing
	// was committed.
	ErrOverBudget = errors.New("refresh does not fit its resource budget")
)

// Budget caps what one refresh may use, as LanceDB Enterprise's refresh
// options spell them: aggregate caps on the whole refresh. Each field is
// nil when not given (presence matters: CPU or memory needs all three of
// CPUMillis, MemoryBytes and GPUCount). The caps are enforced, not
// forwarded: CPUMillis bounds the refresh's concurrent workers at
// ceil(CPUMillis/1000) and MemoryBytes its batch memory.
type Budget struct {
	// CPUMillis is millicores: 8000 is eight cores.
	CPUMillis *int64 `json:"cpu_millis,omitempty"`
	// MemoryBytes caps the refresh's batch memory.
	MemoryBytes *int64 `json:"memory_bytes,omitempty"`
	// GPUCount is the GPUs the refresh may use; 0 means CPU only.
	GPUCount *int64 `json:"gpu_count,omitempty"`
	// GPUClass names a GPU model; any value is refused here.
	GPUClass *string `json:"gpu_class,omitempty"`
}

// IsZero reports whether no field is given.
func (b Budget) IsZero() bool {
	return b.CPUMillis == nil && b.MemoryBytes == nil && b.GPUCount == nil && b.GPUClass == nil
}

// Validate checks b against LanceDB Enterprise's rules, before any work:
// negative values are refused; CPU or memory needs all three of
// cpu_millis, memory_bytes and gpu_count; gpu_count > 0 or any gpu_class
// is refused naming GPU; a GPU cap alone (gpu_count = 0) is fine. A
// cpu_millis of 0 is refused too: it would allow no worker at all.
func (b Budget) Validate() error {
	for _, f := range []struct {
		name string
		v    *int64
	}{{"cpu_millis", b.CPUMillis}, {"memory_bytes", b.MemoryBytes}, {"gpu_count", b.GPUCount}} {
		if f.v != nil && *f.v < 0 {
			return errorf(ErrInvalid, ErrBudget, "resource budget: %s must not be negative (got %d)", f.name, *f.v)
		}
	}
	if b.GPUCount != nil && *b.GPUCount > 0 {
		return errorf(ErrUnsupported, ErrGPU, "resource budget: gpu_count = %d asks for a GPU, and no refresh here runs on a GPU (use gpu_count = 0 for CPU only)", *b.GPUCount)
	}
	if b.GPUClass != nil {
		return errorf(ErrUnsupported, ErrGPU, "resource budget: gpu_class '%s' asks for a GPU, and no refresh here runs on a GPU", *b.GPUClass)
	}
	if (b.CPUMillis != nil || b.MemoryBytes != nil) && (b.CPUMillis == nil || b.MemoryBytes == nil || b.GPUCount == nil) {
		return errorf(ErrInvalid, ErrBudget, "resource budget: setting cpu_millis or memory_bytes requires all three of cpu_millis, memory_bytes and gpu_count (missing %s)", b.missing())
	}
	if b.CPUMillis != nil && *b.CPUMillis == 0 {
		return errorf(ErrInvalid, ErrBudget, "resource budget: cpu_millis = 0 allows no worker; give at least 1")
	}
	return nil
}

// missing names the absent fields of the CPU/memory triple.
func (b Budget) missing() string {
	s := ""
	for _, f := range []struct {
		name string
		set  bool
	}{{"cpu_millis", b.CPUMillis != nil}, {"memory_bytes", b.MemoryBytes != nil}, {"gpu_count", b.GPUCount != nil}} {
		if !f.set {
			if s != "" {
				s += ", "
			}
			s += f.name
		}
	}
	return s
}

// Workers is the most concurrent workers the budget allows,
// ceil(cpu_millis/1000), or 0 when uncapped.
func (b Budget) Workers() int {
	if b.CPUMillis == nil || *b.CPUMillis <= 0 {
		return 0
	}
	return int((*b.CPUMillis + 999) / 1000)
}

// MemoryCap is the batch memory cap in bytes and whether one is given.
func (b Budget) MemoryCap() (int64, bool) {
	if b.MemoryBytes == nil {
		return 0, false
	}
	return *b.MemoryBytes, true
}

// String is the budget as LanceDB's WITH options spell it ("" when empty).
func (b Budget) String() string {
	s := ""
	add := func(k, v string) {
		if s != "" {
			s += ", "
		}
		s += k + " = " + v
	}
	if b.CPUMillis != nil {
		add("cpu_millis", fmt.Sprint(*b.CPUMillis))
	}
	if b.MemoryBytes != nil {
		add("memory_bytes", fmt.Sprint(*b.MemoryBytes))
	}
	if b.GPUCount != nil {
		add("gpu_count", fmt.Sprint(*b.GPUCount))
	}
	if b.GPUClass != nil {
		add("gpu_class", fmt.Sprintf("'%s'", *b.GPUClass))
	}
	return s
}

// OverBudgetError reports a refresh that cannot run within its budget. It
// unwraps to ErrOverBudget; nothing was committed.
type OverBudgetError struct {
	View string
	// Resource is "memory_bytes" or "cpu_millis".
	Resource string
	// Need is the least the refresh needs, Have the budget's cap.
	Need, Have int64
	// What says what needs it.
	What string
}

func (e *OverBudgetError) Error() string {
	return fmt.Sprintf("refresh of view '%s' cannot run within its budget: it needs at least %s = %d (%s), the budget allows %d; nothing was committed",
		e.View, e.Resource, e.Need, e.What, e.Have)
}

// Unwrap makes errors.Is(err, ErrOverBudget) hold.
func (e *OverBudgetError) Unwrap() error { return ErrOverBudget }
