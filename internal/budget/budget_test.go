package budget

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
)

// TestForEachCap runs many calls under limiters of 1 to 3 workers and
// checks every call ran once, at most the cap ran at once (counted by the
// calls themselves), and the tokens all came back.
func TestForEachCap(t *testing.T) {
	for workers := 1; workers <= 3; workers++ {
		l := New(workers)
		ctx := With(context.Background(), l)
		var in, most atomic.Int64
		ran := make([]atomic.Int64, 500)
		err := ForEach(ctx, len(ran), 8, func(_ context.Context, i int) error {
			n := in.Add(1)
			for p := most.Load(); n > p && !most.CompareAndSwap(p, n); p = most.Load() {
			}
			ran[i].Add(1)
			in.Add(-1)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		for i := range ran {
			if ran[i].Load() != 1 {
				t.Fatalf("call %d ran %d times", i, ran[i].Load())
			}
		}
		if most.Load() > int64(workers) || l.Peak() > workers {
			t.Fatalf("cap %d: %d calls at once, limiter peak %d", workers, most.Load(), l.Peak())
		}
		if got := l.Acquire(workers); got != workers-1 {
			t.Fatalf("cap %d: %d tokens free after ForEach, want %d", workers, got, workers-1)
		}
	}
}

func TestForEachError(t *testing.T) {
	boom := errors.New("boom")
	for _, l := range []*Limiter{New(1), New(4)} {
		err := ForEach(With(context.Background(), l), 100, 4, func(_ context.Context, i int) error {
			if i == 10 {
				return boom
			}
			return nil
		})
		if !errors.Is(err, boom) {
			t.Fatalf("%v, want boom", err)
		}
	}
}

func TestGoInline(t *testing.T) {
	l := New(1) // no helper token: Go runs f in the caller
	ran := false
	<-Go(l, func() { ran = true })
	if !ran || l.Peak() != 1 {
		t.Fatalf("ran %v, peak %d", ran, l.Peak())
	}
	l = New(2)
	done := make(chan struct{})
	w := Go(l, func() { <-done })
	if l.TryAcquire() {
		t.Fatal("a second helper got a token under a cap of 2")
	}
	close(done)
	<-w
	if !l.TryAcquire() {
		t.Fatal("the helper's token did not come back")
	}
}
