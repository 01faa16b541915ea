package matview

import (
	"strconv"
)

// The view metadata keys a view's default Budget is stored under, beside
// the policy keys: the daemon applies it to the view's auto-refreshes.
const (
	// KeyCPUMillis is Budget.CPUMillis (decimal millicores).
	KeyCPUMillis = "mv.cpu_millis"
	// KeyMemoryBytes is Budget.MemoryBytes (decimal bytes).
	KeyMemoryBytes = "mv.memory_bytes"
	// KeyGPUCount is Budget.GPUCount (decimal).
	KeyGPUCount = "mv.gpu_count"
	// KeyGPUClass is Budget.GPUClass.
	KeyGPUClass = "mv.gpu_class"
)

// BudgetFromMetadata reads a view's default budget from its metadata (a
// key absent or empty: that field is not given) and validates it.
func BudgetFromMetadata(md map[string]string) (Budget, error) {
	var b Budget
	for _, f := range []struct {
		key string
		dst **int64
	}{{KeyCPUMillis, &b.CPUMillis}, {KeyMemoryBytes, &b.MemoryBytes}, {KeyGPUCount, &b.GPUCount}} {
		s := md[f.key]
		if s == "" {
			continue
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return Budget{}, errorf(ErrInvalid, ErrBudget, "%s: %q is not an integer", f.key, s)
		}
		*f.dst = &n
	}
	if s, ok := md[KeyGPUClass]; ok && s != "" {
		b.GPUClass = &s
	}
	if err := b.Validate(); err != nil {
		return Budget{}, err
	}
	return b, nil
}

// Metadata returns the metadata keys that store b as a view's default
// budget; a field not given has its key present and empty, so that
// writing the map clears an older value.
func (b Budget) Metadata() map[string]string {
	num := func(p *int64) string {
		if p == nil {
			return ""
		}
		return strconv.FormatInt(*p, 10)
	}
	class := ""
	if b.GPUClass != nil {
		class = *b.GPUClass
	}
	return map[string]string{
		KeyCPUMillis:   num(b.CPUMillis),
		KeyMemoryBytes: num(b.MemoryBytes),
		KeyGPUCount:    num(b.GPUCount),
		KeyGPUClass:    class,
	}
}
