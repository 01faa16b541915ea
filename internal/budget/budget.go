// Package budget enforces one refresh's CPU cap inside a shared process:
// a Limiter, carried by the refresh's context, holds the worker tokens
// every fan-out of the refresh (rebuild workers, page decoding, encoding,
// side work beside a commit) takes before starting a goroutine. The
// process-wide GOMAXPROCS is left alone, so other views keep their own
// parallelism.
//
// The refresh's own goroutine is a worker already: a Limiter of n workers
// has n-1 tokens for helpers. A fan-out never waits for a token: it starts
// a helper only while one is free and otherwise does the work itself, so
// no goroutine ever blocks holding a token that another needs, and at
// most n workers run at once.
package budget

import (
	"context"
	"sync/atomic"
)

// Limiter caps a refresh's concurrent workers. The zero value is not
// usable; a nil *Limiter is uncapped.
type Limiter struct {
	tokens chan struct{}
	active atomic.Int64 // workers running, the refresh's goroutine included
	peak   atomic.Int64
}

// New returns a limiter of at most workers concurrent workers (at least
// one: the refresh's own goroutine).
func New(workers int) *Limiter {
	workers = max(workers, 1)
	l := &Limiter{tokens: make(chan struct{}, workers-1)}
	for range workers - 1 {
		l.tokens <- struct{}{}
	}
	l.active.Store(1)
	l.peak.Store(1)
	return l
}

// Workers is the cap.
func (l *Limiter) Workers() int { return cap(l.tokens) + 1 }

// Peak is the most workers that ran at once: what a test checks the cap
// against.
func (l *Limiter) Peak() int { return int(l.peak.Load()) }

// TryAcquire takes a helper's token if one is free. A nil limiter always
// grants one.
func (l *Limiter) TryAcquire() bool {
	if l == nil {
		return true
	}
	select {
	case <-l.tokens:
		n := l.active.Add(1)
		for {
			p := l.peak.Load()
			if n <= p || l.peak.CompareAndSwap(p, n) {
				break
			}
		}
		return true
	default:
		return false
	}
}

// Release returns a token TryAcquire granted.
func (l *Limiter) Release() {
	if l == nil {
		return
	}
	l.active.Add(-1)
	l.tokens <- struct{}{}
}

// Acquire takes up to want helpers' tokens without waiting and returns
// how many it got (want itself for a nil limiter); each is returned with
// Release.
func (l *Limiter) Acquire(want int) int {
	if l == nil {
		return want
	}
	n := 0
	for n < want && l.TryAcquire() {
		n++
	}
	return n
}

type ctxKey struct{}

// With returns ctx carrying l: the fan-outs of work done under it take
// their goroutines' tokens from l.
func With(ctx context.Context, l *Limiter) context.Context {
	return context.WithValue(ctx, ctxKey{}, l)
}

// From returns the limiter ctx carries, or nil (uncapped).
func From(ctx context.Context) *Limiter {
	l, _ := ctx.Value(ctxKey{}).(*Limiter)
	return l
}

// Go runs f in a new goroutine when a token is free (always, without a
// limiter), and otherwise right away in the caller; the returned channel
// is closed once f has returned. Side work beside the refresh's own (an
// index update beside a commit) uses it.
func Go(l *Limiter, f func()) <-chan struct{} {
	done := make(chan struct{})
	if !l.TryAcquire() {
		f()
		close(done)
		return done
	}
	go func() {
		defer close(done)
		defer l.Release()
		f()
	}()
	return done
}

// ForEach calls f(i) for i in [0, n), on up to width goroutines at once,
// the caller's included, and returns the first error (the remaining calls
// are skipped after one). Under a limiter the helpers beyond the caller
// are only those whose tokens are free.
func ForEach(ctx context.Context, n, width int, f func(ctx context.Context, i int) error) error {
	l := From(ctx)
	helpers := 0
	if n > 1 && width > 1 {
		helpers = l.Acquire(min(width, n) - 1)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var next atomic.Int64
	var firstErr atomic.Pointer[error]
	work := func() {
		for {
			i := int(next.Add(1) - 1)
			if i >= n || ctx.Err() != nil {
				return
			}
			if err := f(ctx, i); err != nil {
				firstErr.CompareAndSwap(nil, &err)
				cancel()
				return
			}
		}
	}
	done := make(chan struct{}, helpers)
	for range helpers {
		go func() {
			defer func() { done <- struct{}{} }()
			defer l.Release()
			work()
		}()
	}
	work()
	for range helpers {
		<-done
	}
	if p := firstErr.Load(); p != nil {
		return *p
	}
	return ctx.Err()
}
