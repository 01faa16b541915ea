package matview

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/mvd-project/mvd/internal/budget"
	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/rebuild"
)

// budgetContext puts a refresh's worker cap (Budget.Workers) in ctx as a
// budget.Limiter: every fan-out under the refresh (rebuild workers, page
// decoding, the data writer, side work beside the commit) takes its
// goroutines' tokens from it. Without a CPU cap ctx is returned as is.
func budgetContext(ctx context.Context, b Budget) (context.Context, *budget.Limiter) {
	n := b.Workers()
	if n == 0 {
		return ctx, nil
	}
	l := budget.New(n)
	return budget.With(ctx, l), l
}

// budget settles the run's budget (the view's default, with ViewBudget
// and no budget given) and puts its worker cap in ctx.
func (r *refreshRun) budget(ctx context.Context) (context.Context, *budget.Limiter, error) {
	if r.o.ViewBudget && r.o.Budget.IsZero() {
		b, err := BudgetFromMetadata(r.vm.Schema.Metadata)
		if err != nil {
			return ctx, nil, fmt.Errorf("refresh view '%s': its default budget (%s, …): %w", r.v.name, KeyCPUMillis, err)
		}
		r.o.Budget = b
	}
	ctx, l := budgetContext(ctx, r.o.Budget)
	return ctx, l, nil
}

// Memory model of a rebuild under a memory budget, in bytes: what it
// keeps for the whole refresh, and what its batches in flight hold.
const (
	// provenanceRowBytes is what a rebuild keeps per source row: its
	// provenance pair (16 bytes) and its id in the commit's key set.
	provenanceRowBytes = 18
	// minBudgetBatchRows is the smallest batch a budgeted rebuild scans:
	// below it the per-batch costs dominate.
	minBudgetBatchRows = 256
	// budgetQueue is how many view batches a worker runs ahead of the sink
	// under a memory budget.
	budgetQueue = 2
	// writerBatches is how many view batches the data writer holds (its
	// queue and the batch it encodes).
	writerBatches = 5
	// maxWriterPageRows is the most rows a column gathers before it is
	// encoded as a page (datawriter's maxPageRows).
	maxWriterPageRows = 1 << 16
	// gcHeadroom is how far Go's heap grows past its live bytes before a
	// collection (GOGC = 100: twice).
	gcHeadroom = 2
	// minBudgetPageBytes is the smallest page a budgeted rebuild's writer
	// gathers per column.
	minBudgetPageBytes = 64 << 10
	// varFieldBytes is the least a variable-width value is assumed to
	// take, with its offset.
	varFieldBytes = 16
)

// rebuildBounds sizes a rebuild's batches, read-ahead, scanning workers
// and writer pages to the refresh's memory budget, before any work: it
// returns the rebuild's options and the writer's page size, or an
// OverBudgetError saying how much the rebuild needs at least. Without a
// memory cap it returns the defaults (zero values).
func (a *attempt) rebuildBounds() (rebuild.Options, int64, error) {
	capBytes, ok := a.o.Budget.MemoryCap()
	if !ok {
		return rebuild.Options{}, 0, nil
	}
	// The batches live in Go's heap, which the collector lets grow to
	// gcHeadroom times what is live before it collects: the live batches
	// get the cap's share that leaves room for their garbage.
	live := capBytes / gcHeadroom
	srcRow, viewRow, viewWidths, rows, err := a.rowWidths()
	if err != nil {
		return rebuild.Options{}, 0, err
	}
	fixed := int64(rows) * provenanceRowBytes
	if !a.vm.DataFileVersion.AtLeast(lance.V2_1) {
		// 2.0 files gather a whole fragment's rows before writing.
		fixed += int64(min(rows, lance.MaxRowsPerFragment)) * viewRow
	}
	pageBytes := budgetPageBytes(a.o.Budget)
	pages := func(pb int64) int64 {
		var n int64
		for _, w := range viewWidths {
			n += 3 * min(pb, maxWriterPageRows*w) // gathered, joined, encoded
		}
		return n
	}
	helpers := rebuild.ScanWorkers()
	if l := a.o.Budget.Workers(); l > 0 {
		helpers = min(helpers, l-1)
	}
	// The largest pages first, then fewer workers, then the smallest pages.
	for _, pb := range []int64{pageBytes, minBudgetPageBytes} {
		for k := helpers; k >= 0; k-- {
			perRow := writerBatches*viewRow + int64(max(k, 1))*(2*srcRow+budgetQueue*viewRow)
			batch := (live - fixed - pages(pb)) / perRow
			if batch >= minBudgetBatchRows {
				workers := k
				if k == 0 {
					workers = -1 // the caller scans alone
				}
				return rebuild.Options{BatchSize: int(min(batch, lance.DefaultBatchSize)), Queue: budgetQueue, Workers: workers}, pb, nil
			}
		}
	}
	need := gcHeadroom * (fixed + pages(minBudgetPageBytes) + minBudgetBatchRows*(writerBatches*viewRow+2*srcRow+budgetQueue*viewRow))
	return rebuild.Options{}, 0, &OverBudgetError{View: a.v.name, Resource: "memory_bytes", Need: need, Have: capBytes,
		What: fmt.Sprintf("a rebuild of %d source rows of about %d bytes (view rows of about %d bytes), in batches of %d rows", rows, srcRow, viewRow, minBudgetBatchRows)}
}

// rowWidths estimates the bytes of one scanned source row (the columns
// the plan reads, with the row metadata) and one view row, the bytes per
// row of each view column, and the source's rows. Fixed-width values are
// exact; variable-width ones take the source's average, from its data
// files' sizes, of what its fixed-width columns leave.
func (a *attempt) rowWidths() (src, view int64, viewWidths []int64, rows uint64, err error) {
	ss, err := a.sm.Schema.Arrow()
	if err != nil {
		return 0, 0, nil, 0, errorf(ErrUnsupported, err, "refresh view '%s': source schema: %v", a.v.name, err)
	}
	var fileBytes uint64
	for _, f := range a.sm.Fragments {
		rows += f.PhysicalRows
		for _, df := range f.Files {
			fileBytes += df.SizeBytes
		}
	}
	var fixed int64
	vars := 0
	for _, f := range ss.Fields() {
		if w, ok := fixedWidth(f.Type); ok {
			fixed += w
		} else {
			vars++
		}
	}
	varBytes := int64(varFieldBytes)
	if rows > 0 && vars > 0 {
		varBytes = max(varBytes, (int64(fileBytes/rows)-fixed)/int64(vars)+4)
	}
	width := func(t arrow.DataType) int64 {
		if w, ok := fixedWidth(t); ok {
			return max(w, 1)
		}
		return varBytes
	}
	src = 16 // _rowid, _rowaddr
	for _, c := range a.p.Columns() {
		if i := ss.FieldIndices(c); len(i) > 0 {
			src += width(ss.Field(i[0]).Type)
		} else {
			src += varBytes // a nested path: its root's share is unknown
		}
	}
	for _, f := range a.p.Schema().Fields() {
		w := width(f.Type)
		viewWidths = append(viewWidths, w)
		view += w
	}
	return src, view, viewWidths, rows, nil
}

// fixedWidth is the bytes per value of a fixed-width type (fixed-size
// lists and structs of them included).
func fixedWidth(t arrow.DataType) (int64, bool) {
	switch t := t.(type) {
	case *arrow.FixedSizeListType:
		w, ok := fixedWidth(t.Elem())
		return w * int64(t.Len()), ok
	case *arrow.StructType:
		var n int64
		for _, f := range t.Fields() {
			w, ok := fixedWidth(f.Type)
			if !ok {
				return 0, false
			}
			n += w
		}
		return n, true
	case *arrow.BooleanType:
		return 1, true
	case arrow.FixedWidthDataType:
		return int64((t.BitWidth() + 7) / 8), true
	}
	return 0, false
}

// budgetPageBytes is the page size the writer gathers per column under
// b's memory cap (a sixteenth of it, within 64 KiB and 8 MiB), or 0 (the
// writer's default) without one.
func budgetPageBytes(b Budget) int64 {
	capBytes, ok := b.MemoryCap()
	if !ok {
		return 0
	}
	return min(max(capBytes/16, minBudgetPageBytes), 8<<20)
}
