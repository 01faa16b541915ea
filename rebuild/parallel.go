package rebuild

import (
	"context"
	"io"
	"runtime"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
)

// maxApplyWorkers caps the goroutines that filter and project batches.
const maxApplyWorkers = 4

// applyWorkers is how many goroutines apply the plan: one per CPU (up to
// maxApplyWorkers), so a rebuild's plan work is not bound to one core.
func applyWorkers() int { return max(1, min(runtime.GOMAXPROCS(0), maxApplyWorkers)) }

// applyParallel runs apply over the batches next returns on workers
// goroutines and delivers the results in next's order (then next's error,
// io.EOF at the end). apply must be safe for concurrent use; it owns
// neither its input (released here) nor is its result kept. stop ends the
// goroutines, waits for them and releases results not taken; it must be
// called before whatever next reads from is closed.
func applyParallel(ctx context.Context, next func(context.Context) (arrow.RecordBatch, error), apply func(arrow.RecordBatch) (arrow.RecordBatch, error), workers int) (func(context.Context) (arrow.RecordBatch, error), func()) {
	ctx, cancel := context.WithCancel(ctx)
	type result struct {
		out  arrow.RecordBatch
		err  error
		done chan struct{}
	}
	type job struct {
		rec arrow.RecordBatch
		res *result
	}
	order := make(chan *result, 2*workers) // every batch's result, in order
	jobs := make(chan job, workers)
	var wg sync.WaitGroup
	wg.Add(1 + workers)
	go func() { // the dispatcher: reads next, queues results in order
		defer wg.Done()
		defer close(order)
		defer close(jobs)
		for {
			rec, err := next(ctx)
			r := &result{done: make(chan struct{})}
			if err != nil {
				r.err = err
				close(r.done)
			}
			select {
			case order <- r:
			case <-ctx.Done():
				if rec != nil {
					rec.Release()
				}
				return
			}
			if err != nil {
				return
			}
			select {
			case jobs <- job{rec, r}:
			case <-ctx.Done():
				rec.Release()
				r.err = ctx.Err()
				close(r.done)
				return
			}
		}
	}()
	for range workers {
		go func() {
			defer wg.Done()
			for j := range jobs {
				j.res.out, j.res.err = apply(j.rec)
				j.rec.Release()
				close(j.res.done)
			}
		}()
	}
	get := func(c context.Context) (arrow.RecordBatch, error) {
		select {
		case r, ok := <-order:
			if !ok {
				// Ended without the source's end: cancelled, which must
				// never read as the end of the source.
				if err := ctx.Err(); err != nil {
					return nil, err
				}
				return nil, io.EOF
			}
			select {
			case <-r.done:
				return r.out, r.err
			case <-c.Done():
				go func() { // still owed: released once applied
					<-r.done
					if r.out != nil {
						r.out.Release()
					}
				}()
				return nil, c.Err()
			}
		case <-c.Done():
			return nil, c.Err()
		}
	}
	stop := func() {
		cancel()
		wg.Wait()
		for r := range order {
			<-r.done
			if r.out != nil {
				r.out.Release()
			}
		}
	}
	return get, stop
}
