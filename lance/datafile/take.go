package datafile

import (
	"context"
	"fmt"
	"sort"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// takeJob is the rows of one page of one leaf column that a take needs,
// page-local, sorted.
type takeJob struct {
	col, page int
	rows      []uint64
}

// takeRows21 decodes the given rows (file rows, sorted, duplicates allowed)
// of node from a 2.1+ file. Each leaf page holding any of them is one job
// that reads and decodes each of its bytes at most once (see takePage), so
// the cost follows the rows taken, not the pages' sizes.
func (r *Reader) takeRows21(ctx context.Context, node *fieldNode, dt arrow.DataType, rows []uint64, mem memory.Allocator) (arrow.Array, error) {
	paths := fieldPaths(node)
	cols := make([]int, 0, len(paths))
	for c := range paths {
		cols = append(cols, c)
	}
	sort.Ints(cols)
	var jobs []takeJob
	for _, c := range cols {
		if err := r.colErr[c]; err != nil {
			return nil, fmt.Errorf("read %s %v column %d: %w", r.name, node, c, err)
		}
		s, err := r.pageStarts(c)
		if err != nil {
			return nil, fmt.Errorf("read %s %v: %w", r.name, node, err)
		}
		for i, p := 0, 0; i < len(rows); {
			for s[p+1] <= rows[i] {
				p++ // rows are below numRows = s[len(s)-1], so p stays a page
			}
			j := i
			for j < len(rows) && rows[j] < s[p+1] {
				j++
			}
			local := make([]uint64, j-i)
			for k := range local {
				local[k] = rows[i+k] - s[p]
			}
			jobs = append(jobs, takeJob{c, p, local})
			i = j
		}
	}
	results := make([]*pageData, len(jobs))
	work := func(ctx context.Context, i int) error {
		j := jobs[i]
		pd, err := r.takePage(j.col, j.page, j.rows)
		if err != nil {
			return fmt.Errorf("read %s %v column %d page %d: %w", r.name, node, j.col, j.page, err)
		}
		results[i] = pd
		return nil
	}
	if err := pageWorkers(ctx, len(jobs), work); err != nil {
		return nil, err
	}
	leaves := map[int]*leafData{}
	for i, j := range jobs {
		ld := leaves[j.col]
		if ld == nil {
			ld = &leafData{path: paths[j.col], states: make([]nodeState, len(paths[j.col])), lim: r.limits}
			leaves[j.col] = ld
		}
		if err := ld.appendPage(results[i]); err != nil {
			return nil, fmt.Errorf("read %s %v column %d page %d: %w", r.name, node, j.col, j.page, err)
		}
		results[i] = nil
	}
	d, err := buildNode(node, dt, 0, leaves, mem)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", r.name, err)
	}
	defer d.Release()
	if d.Len() != len(rows) {
		return nil, fmt.Errorf("read %s %v: decoded %d rows, want %d", r.name, node, d.Len(), len(rows))
	}
	return array.MakeFromData(d), nil
}
