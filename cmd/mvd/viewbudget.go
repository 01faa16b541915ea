package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mvd-project/mvd/matview"
)

// budgetFlags are the resource budget flags of `mvd view refresh` (the
// refresh's caps) and `mvd view alter` (the view's default for the
// daemon's auto-refreshes, stored in mv.cpu_millis, … beside the policy).
type budgetFlags struct {
	cpu, mem, gpu int64
	class         string
}

var budgetFlagNames = []string{"cpu-millis", "memory-bytes", "gpu-count", "gpu-class"}

// addBudgetFlags adds --cpu-millis, --memory-bytes, --gpu-count and
// --gpu-class to cmd.
func addBudgetFlags(cmd *cobra.Command, what string) *budgetFlags {
	b := &budgetFlags{}
	f := cmd.Flags()
	f.Int64Var(&b.cpu, "cpu-millis", 0, what+": cap the concurrent workers at ceil(`N`/1000) (millicores; needs --memory-bytes and --gpu-count)")
	f.Int64Var(&b.mem, "memory-bytes", 0, what+": cap the batch memory at `N` bytes (needs --cpu-millis and --gpu-count)")
	f.Int64Var(&b.gpu, "gpu-count", 0, what+": GPUs, `N`; only 0 (CPU only) is accepted")
	f.StringVar(&b.class, "gpu-class", "", what+": GPU model `NAME`; refused (no refresh here runs on a GPU)")
	return b
}

// given reports whether any budget flag was given.
func (b *budgetFlags) given(cmd *cobra.Command) bool {
	for _, n := range budgetFlagNames {
		if cmd.Flags().Changed(n) {
			return true
		}
	}
	return false
}

// merge applies the flags given to base and checks the result against
// LanceDB Enterprise's rules: a refused budget is a usage error (exit 2)
// naming the rule, found before anything is opened or written.
func (b *budgetFlags) merge(cmd *cobra.Command, base matview.Budget) (matview.Budget, error) {
	f := cmd.Flags()
	out := base
	for _, x := range []struct {
		name string
		v    int64
		dst  **int64
	}{{"cpu-millis", b.cpu, &out.CPUMillis}, {"memory-bytes", b.mem, &out.MemoryBytes}, {"gpu-count", b.gpu, &out.GPUCount}} {
		if f.Changed(x.name) {
			v := x.v
			*x.dst = &v
		}
	}
	if f.Changed("gpu-class") {
		c := b.class
		out.GPUClass = &c
	}
	if err := out.Validate(); err != nil {
		return out, budgetUsage(err)
	}
	return out, nil
}

// budgetUsage turns a refused budget into a usage error that still
// unwraps to matview's sentinels.
func budgetUsage(err error) error {
	if errors.Is(err, matview.ErrBudget) || errors.Is(err, matview.ErrGPU) {
		return budgetUsageError{err}
	}
	return err
}

// budgetUsageError is a refused budget on the command line (exit 2).
type budgetUsageError struct{ err error }

func (e budgetUsageError) Error() string { return e.err.Error() }

// Unwrap returns matview's error.
func (e budgetUsageError) Unwrap() error { return e.err }

// ExitCode implements exitCoder.
func (e budgetUsageError) ExitCode() int { return exitUsage }

// describeBudget is a budget as `view alter` reports it.
func describeBudget(b matview.Budget) string {
	if b.IsZero() {
		return "none"
	}
	return strings.ReplaceAll(fmt.Sprint(b), " = ", "=")
}

// alterBudget merges the budget flags given to `view alter` onto the
// view's stored default (stored: its metadata) and adds its keys to md.
// It returns the new default, or nil when no budget flag was given.
func alterBudget(cmd *cobra.Command, bf *budgetFlags, stored, md map[string]string) (*matview.Budget, error) {
	if !bf.given(cmd) {
		return nil, nil
	}
	base, err := matview.BudgetFromMetadata(stored)
	if err != nil {
		base = matview.Budget{} // an unreadable stored budget is replaced
	}
	b, err := bf.merge(cmd, base)
	if err != nil {
		return nil, err
	}
	for k, v := range b.Metadata() {
		md[k] = v
	}
	return &b, nil
}
