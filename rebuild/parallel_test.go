package rebuild

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// double is an apply that takes a random while (so workers finish out of
// order) and returns the batch's value doubled, failing at value fail.
func double(mem memory.Allocator, fail int64) func(arrow.RecordBatch) (arrow.RecordBatch, error) {
	return func(rec arrow.RecordBatch) (arrow.RecordBatch, error) {
		v := rec.Column(0).(*array.Int64).Value(0)
		time.Sleep(time.Duration(rand.IntN(300)) * time.Microsecond)
		if v == fail {
			return nil, errors.New("bad row")
		}
		b := array.NewInt64Builder(mem)
		defer b.Release()
		b.Append(2 * v)
		a := b.NewArray()
		defer a.Release()
		return array.NewRecordBatch(rec.Schema(), []arrow.Array{a}, 1), nil
	}
}

// TestApplyParallelInOrder: results come in source order whatever order
// the workers finish in, then the source's end; nothing leaks.
func TestApplyParallelInOrder(t *testing.T) {
	for _, end := range []error{io.EOF, errors.New("disk on fire")} {
		for _, workers := range []int{1, 3} {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			get, stop := applyParallel(context.Background(), source(mem, 200, end), double(mem, -1), workers)
			for want := int64(0); ; want++ {
				rec, err := get(context.Background())
				if err != nil {
					if !errors.Is(err, end) || want != 200 {
						t.Fatalf("after %d batches: %v, want %v after 200", want, err, end)
					}
					break
				}
				if got := rec.Column(0).(*array.Int64).Value(0); got != 2*want {
					t.Fatalf("batch %d holds %d", want, got)
				}
				rec.Release()
			}
			if _, err := get(context.Background()); !errors.Is(err, io.EOF) {
				t.Fatalf("after the end: %v, want io.EOF", err)
			}
			stop()
			mem.AssertSize(t, 0)
		}
	}
}

// TestApplyParallelError: a failed batch's error arrives in its place.
func TestApplyParallelError(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	get, stop := applyParallel(context.Background(), source(mem, 100, io.EOF), double(mem, 37), 3)
	for want := int64(0); ; want++ {
		rec, err := get(context.Background())
		if err != nil {
			if want != 37 || err.Error() != "bad row" {
				t.Fatalf("after %d batches: %v, want the error of batch 37", want, err)
			}
			break
		}
		rec.Release()
	}
	stop()
	mem.AssertSize(t, 0)
}

// TestApplyParallelStopAndCancel: stopping early releases every batch in
// flight, and a cancelled context never reads as the source's end.
func TestApplyParallelStopAndCancel(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	get, stop := applyParallel(context.Background(), source(mem, 1000, io.EOF), double(mem, -1), 3)
	rec, err := get(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	rec.Release()
	stop()
	mem.AssertSize(t, 0)

	ctx, cancel := context.WithCancel(context.Background())
	get, stop = applyParallel(ctx, source(mem, 1_000_000, io.EOF), double(mem, -1), 2)
	cancel()
	for i := 0; ; i++ {
		rec, err := get(context.Background())
		if err == nil {
			rec.Release()
			continue
		}
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("after a cancel: %v, want context.Canceled", err)
		}
		break
	}
	stop()
	mem.AssertSize(t, 0)
}
