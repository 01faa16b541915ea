package rebuild

import (
	"context"
	"errors"
	"io"
	"runtime"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/mvd-project/mvd/internal/budget"
	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/plan"
)

// fragmentQueue is how many view batches of one fragment may wait for the
// sink: a worker runs ahead of the sink by at most this many batches
// beyond the fragment being drained.
const fragmentQueue = 8

// jobRows is the fewest source rows a worker's job covers: small
// fragments are scanned together, by one scanner, so that a table of many
// tiny fragments (appends of a few rows) costs no scanner per fragment.
const jobRows = 64 << 10

// item is one view batch or the error that ended a fragment.
type item struct {
	rec arrow.RecordBatch
	err error
}

// runFragments rebuilds an uncapped view: each source fragment is scanned
// by one of workers goroutines, filtered by the plan before the projected
// columns are read (late materialization, lance.ScanFilter) and
// projected; the view batches reach sink in scan order, one fragment
// after the other.
//
// A worker's job is a run of consecutive fragments of at least minRows
// rows (jobRows in a rebuild).
func runFragments(ctx context.Context, m *lance.Snapshot, p *plan.Plan, mem memory.Allocator, fo fragOpts, sink Sink) (uint64, error) {
	ctx, cancel := context.WithCancel(ctx)
	workers := fo.workers
	order := make(chan *fragPart, workers)
	jobs := make(chan fragJob)
	var wg sync.WaitGroup
	wg.Add(1 + workers)
	queue := fo.o.Queue
	if queue <= 0 {
		queue = fragmentQueue
	}
	// The dispatcher hands out fragments in scan order (it only waits).
	// Started as dispatchFragments itself (the jobs computed here), a
	// goroutine dump names it as soon as it runs; before, it shows as the
	// compiler's wrapper of this go statement (runFragments.gowrap1). The
	// budget tests tell it from the workers by those names.
	go dispatchFragments(ctx, &wg, fragmentJobs(m.Fragments, fo.minRows), queue, order, jobs)
	for range workers {
		go func() {
			defer wg.Done()
			defer fo.limiter.Release() // the token Acquire took (nil: none)
			for j := range jobs {
				scanFragments(ctx, m, p, mem, fo.o, j.frags, j.out.ch)
			}
		}()
	}
	var cur *fragPart // the part being sent, out of order already
	stop := func() {
		cancel()
		if cur != nil {
			drainPart(cur)
		}
		wg.Wait()
		for pt := range order {
			drainPart(pt)
		}
	}
	defer stop()
	var sent uint64
	for pt := range order {
		cur = pt
		for it := range pt.ch {
			if it.err != nil {
				return sent, it.err
			}
			n := uint64(it.rec.NumRows())
			err := sink(it.rec)
			it.rec.Release()
			if err != nil {
				return sent, err
			}
			sent += n
		}
	}
	// The dispatcher ends early only when cancelled, which must never
	// read as the end of the source.
	if err := ctx.Err(); err != nil {
		return sent, err
	}
	return sent, nil
}

// fragOpts are runFragments' settings: workers scanning goroutines (each
// holding one of limiter's tokens, when it is not nil), jobs of at least
// minRows rows, o's batch bounds.
type fragOpts struct {
	workers int
	minRows uint64
	o       Options
	limiter *budget.Limiter
}

// fragPart is the output of one job: its batches in scan order, closed by
// its worker.
type fragPart struct{ ch chan item }

// fragJob is a run of fragments to scan into out.
type fragJob struct {
	frags []uint64
	out   *fragPart
}

// dispatchFragments queues each job's part in order (the order its
// batches are sent in) and then hands the job to a worker, until every
// job is handed out or ctx is done; it closes order and jobs, then marks
// itself done in wg.
func dispatchFragments(ctx context.Context, wg *sync.WaitGroup, all [][]uint64, queue int, order chan<- *fragPart, jobs chan<- fragJob) {
	defer wg.Done()
	defer close(order)
	defer close(jobs)
	for _, frags := range all {
		pt := &fragPart{ch: make(chan item, queue)}
		select {
		case order <- pt:
		case <-ctx.Done():
			return
		}
		select {
		case jobs <- fragJob{frags, pt}:
		case <-ctx.Done():
			pt.ch <- item{err: ctx.Err()}
			close(pt.ch)
			return
		}
	}
}

// drainPart releases what a part still holds, until its worker closes it.
func drainPart(pt *fragPart) {
	for it := range pt.ch { // closed by its worker, which stops now
		if it.rec != nil {
			it.rec.Release()
		}
	}
}

// fragmentJobs groups consecutive fragments into jobs of at least minRows
// rows (but the last), in scan order.
func fragmentJobs(frags []*lance.Fragment, minRows uint64) [][]uint64 {
	var jobs [][]uint64
	var cur []uint64
	var rows uint64
	for _, f := range frags {
		cur = append(cur, f.ID)
		if rows += f.PhysicalRows; rows >= minRows {
			jobs = append(jobs, cur)
			cur, rows = nil, 0
		}
	}
	if cur != nil {
		jobs = append(jobs, cur)
	}
	return jobs
}

// scanFragments scans fragments through the plan into out (closed at the
// end; an error is its last item).
func scanFragments(ctx context.Context, m *lance.Snapshot, p *plan.Plan, mem memory.Allocator, o Options, frags []uint64, out chan<- item) {
	defer close(out)
	send := func(it item) bool {
		select {
		case out <- it:
			return true
		case <-ctx.Done():
			if it.rec != nil {
				it.rec.Release()
			}
			return false
		}
	}
	opts, apply := scanPlan(p, mem, o)
	opts.Fragments = frags
	sc, err := m.Scan(ctx, opts)
	if err != nil {
		send(item{err: err})
		return
	}
	defer sc.Close()
	for {
		rec, err := sc.Next(ctx)
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			send(item{err: err})
			return
		}
		v, err := apply(mem, rec)
		rec.Release()
		if err != nil {
			send(item{err: err})
			return
		}
		if v.NumRows() == 0 {
			v.Release()
			continue
		}
		if !send(item{rec: v}) {
			return
		}
	}
}

// maxWorkers caps the goroutines that scan fragments.
const maxWorkers = 4

// applyWorkers is how many fragments are scanned at once: one per CPU (up
// to maxWorkers), so neither decoding nor the plan is bound to one core.
func applyWorkers() int { return max(1, min(runtime.GOMAXPROCS(0), maxWorkers)) }
