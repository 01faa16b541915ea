package rebuild

import (
	"context"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
)

// prefetchDepth is how many scanned batches may wait for the plan and the
// sink. A scan decodes a whole page (64k-100k rows of every column) and
// then slices 8k-row batches out of it, so the queue must hold a page's
// batches for the next page's decoding to overlap the plan's work on
// this one; with two it mostly waited for the plan. The batches are
// slices of the decoded pages, so a deep queue costs little memory.
const prefetchDepth = 16

// prefetch runs next in its own goroutine, up to depth batches ahead, so
// that decoding the source overlaps filtering, projecting and writing the
// view (a rebuild's two halves, each about half its CPU). The returned
// next delivers the batches and errors in order (io.EOF at the end);
// stop ends the goroutine, waits for it and releases batches not taken.
// stop must be called before the scanner is closed.
func prefetch(ctx context.Context, next func(context.Context) (arrow.RecordBatch, error), depth int) (func(context.Context) (arrow.RecordBatch, error), func()) {
	ctx, cancel := context.WithCancel(ctx)
	type item struct {
		rec arrow.RecordBatch
		err error
	}
	ch := make(chan item, depth)
	done := make(chan struct{})
	// stopped is why the goroutine ended without handing over its last
	// error (a cancelled context); read only after ch is closed.
	var stopped error
	go func() {
		defer close(done)
		defer close(ch)
		for {
			rec, err := next(ctx)
			select {
			case ch <- item{rec, err}:
			case <-ctx.Done():
				if rec != nil {
					rec.Release()
				}
				stopped = ctx.Err()
				return
			}
			if err != nil {
				return
			}
		}
	}()
	get := func(c context.Context) (arrow.RecordBatch, error) {
		select {
		case it, ok := <-ch:
			if !ok {
				// Past the end; or ended by a cancellation, which must
				// never read as the end of the source.
				if stopped != nil {
					return nil, stopped
				}
				return nil, io.EOF
			}
			return it.rec, it.err
		case <-c.Done():
			return nil, c.Err()
		}
	}
	stop := func() {
		cancel()
		<-done
		for it := range ch {
			if it.rec != nil {
				it.rec.Release()
			}
		}
	}
	return get, stop
}
