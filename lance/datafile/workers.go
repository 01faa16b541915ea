package datafile

import (
	"context"
	"runtime"

	"github.com/sourcegraph/conc/pool"

	"github.com/mvd-project/mvd/internal/budget"
)

// pageWorkers runs work(ctx, i) for every page job i on up to four
// goroutines (one per CPU). Under a refresh's CPU budget (a
// budget.Limiter in ctx) the helpers beyond the caller are only those
// whose tokens are free, so the refresh's cap holds here too.
func pageWorkers(ctx context.Context, n int, work func(ctx context.Context, i int) error) error {
	width := max(1, min(4, runtime.GOMAXPROCS(0)))
	if budget.From(ctx) != nil {
		return budget.ForEach(ctx, n, width, work)
	}
	p := pool.New().WithErrors().WithContext(ctx).WithMaxGoroutines(width)
	for i := range n {
		p.Go(func(ctx context.Context) error { return work(ctx, i) })
	}
	return p.Wait()
}
