package control

import (
	"context"
	"errors"
	"math"

	"github.com/mvd-project/mvd/matview"
	"github.com/mvd-project/mvd/sqlexpr"
)

// budgetKeys are the REFRESH options of a resource budget.
var budgetKeys = []string{"cpu_millis", "memory_bytes", "gpu_count", "gpu_class"}

// refreshRequest is s as a RefreshRequest, its budget checked against
// LanceDB Enterprise's rules (matview.Budget.Validate) before any work;
// a refusal names the option at fault.
func refreshRequest(s *sqlexpr.RefreshView) (RefreshRequest, error) {
	req := RefreshRequest{View: s.Name, Full: s.Full, SourceVersion: s.SourceVersion, Budget: matview.Budget{GPUClass: s.GPUClass}}
	for _, f := range []struct {
		key string
		v   *uint64
		dst **int64
	}{{"cpu_millis", s.CPUMillis, &req.Budget.CPUMillis}, {"memory_bytes", s.MemoryBytes, &req.Budget.MemoryBytes}, {"gpu_count", s.GPUCount, &req.Budget.GPUCount}} {
		if f.v == nil {
			continue
		}
		if *f.v > math.MaxInt64 {
			return req, invalidAt(s.At[f.key], "option %s = %d is too large (at most %d)", f.key, *f.v, int64(math.MaxInt64))
		}
		n := int64(*f.v)
		*f.dst = &n
	}
	if err := req.Budget.Validate(); err != nil {
		return req, at(budgetErrorPos(s, req.Budget, err), err)
	}
	return req, nil
}

// budgetErrorPos is the option a refused budget's error concerns: the GPU
// option asking for a GPU, cpu_millis = 0, else the first budget option.
func budgetErrorPos(s *sqlexpr.RefreshView, b matview.Budget, err error) int {
	switch {
	case errors.Is(err, matview.ErrGPU) && b.GPUCount != nil && *b.GPUCount > 0:
		return s.At["gpu_count"]
	case errors.Is(err, matview.ErrGPU):
		return s.At["gpu_class"]
	case b.CPUMillis != nil && *b.CPUMillis == 0:
		return s.At["cpu_millis"]
	}
	first := -1
	for _, k := range budgetKeys {
		if p, ok := s.At[k]; ok && (first < 0 || p < first) {
			first = p
		}
	}
	return max(first, 0)
}

func (e *Executor) refresh(ctx context.Context, s *sqlexpr.RefreshView) (*Result, error) {
	req, err := refreshRequest(s)
	if err != nil {
		return nil, err
	}
	if s.Async {
		if e.Jobs == nil {
			return nil, at(s.At["async"], ErrNoDaemon)
		}
		job, err := e.Jobs.Submit(ctx, req)
		if err != nil {
			return nil, at(jobErrorPos(err, s.At["async"], s.NamePos), err)
		}
		return &Result{Kind: KindSubmit, Job: &job}, nil
	}
	r, err := e.DB.Refresh(ctx, s.Name, req.Options())
	if err != nil {
		return nil, at(s.NamePos, err)
	}
	r.Warnings = append(r.Warnings, e.DB.Warnings()...)
	return &Result{Kind: KindRefresh, Refreshed: r, Warnings: r.Warnings}, nil
}
