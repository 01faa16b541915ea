package rebuild

import (
	"context"
	"errors"
	"io"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// source yields n one-column batches holding 0, 1, 2, … then end (io.EOF
// or another error), from a checked allocator.
func source(mem memory.Allocator, n int, end error) func(context.Context) (arrow.RecordBatch, error) {
	schema := arrow.NewSchema([]arrow.Field{{Name: "i", Type: arrow.PrimitiveTypes.Int64}}, nil)
	i := 0
	return func(ctx context.Context) (arrow.RecordBatch, error) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if i == n {
			return nil, end
		}
		b := array.NewInt64Builder(mem)
		defer b.Release()
		b.Append(int64(i))
		i++
		a := b.NewArray()
		defer a.Release()
		return array.NewRecordBatch(schema, []arrow.Array{a}, 1), nil
	}
}

func TestPrefetchDeliversInOrder(t *testing.T) {
	for _, end := range []error{io.EOF, errors.New("disk on fire")} {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		next, stop := prefetch(context.Background(), source(mem, 10, end), 2)
		for want := int64(0); ; want++ {
			rec, err := next(context.Background())
			if err != nil {
				if !errors.Is(err, end) || want != 10 {
					t.Fatalf("after %d batches: %v, want %v after 10", want, err, end)
				}
				break
			}
			if got := rec.Column(0).(*array.Int64).Value(0); got != want {
				t.Fatalf("batch %d holds %d", want, got)
			}
			rec.Release()
		}
		if _, err := next(context.Background()); !errors.Is(err, io.EOF) {
			t.Fatalf("after the end: %v, want io.EOF", err)
		}
		stop()
		mem.AssertSize(t, 0)
	}
}

// TestPrefetchStopReleases stops early (a capped or failed rebuild): the
// goroutine ends and no batch read ahead leaks.
func TestPrefetchStopReleases(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	next, stop := prefetch(context.Background(), source(mem, 1000, io.EOF), 3)
	rec, err := next(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	rec.Release()
	stop()
	mem.AssertSize(t, 0)
}

// TestPrefetchCancel: a cancelled caller's context ends next.
func TestPrefetchCancel(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	ctx, cancel := context.WithCancel(context.Background())
	next, stop := prefetch(ctx, source(mem, 1_000_000, io.EOF), 2)
	cancel()
	for {
		rec, err := next(ctx)
		if err != nil {
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("err = %v, want context.Canceled", err)
			}
			break
		}
		rec.Release()
	}
	stop()
	mem.AssertSize(t, 0)
}
