package scaleout

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/mvd-project/mvd/internal/lancedbtest"
)

// Commit is one source commit of the writer.
type Commit struct {
	Source  string
	Version uint64
	// At is when LanceDB returned it (the commit happened before).
	At time.Time
}

// writerKinds are the writer's operations, in turn: appends, updates that
// move rows across the views' filters, deletes, upserts.
var writerKinds = []lancedbtest.OpKind{
	lancedbtest.Append, lancedbtest.UpdateAcrossFilter, lancedbtest.Append, lancedbtest.Delete,
	lancedbtest.MergeUpsert, lancedbtest.UpdateUnreadColumn,
}

// Writer is LanceDB committing to the sources in turn, Config.Gap apart,
// until stopped.
type Writer struct {
	stop context.CancelFunc
	done chan struct{}

	mu      sync.Mutex
	commits []Commit
	err     error
}

// StartWriter starts the writer (its own LanceDB process).
func (c *Cluster) StartWriter() *Writer {
	d := c.driver()
	ctx, stop := context.WithCancel(context.Background())
	w := &Writer{stop: stop, done: make(chan struct{})}
	gens := map[string]*lancedbtest.OpGen{}
	for _, s := range c.Sources {
		gens[s] = lancedbtest.NewOpGen()
	}
	go func() {
		defer close(w.done)
		tick := time.NewTicker(max(c.cfg.Gap, time.Millisecond))
		defer tick.Stop()
		for i := 0; ; i++ {
			src := c.Sources[i%len(c.Sources)]
			kind := writerKinds[(i/len(c.Sources))%len(writerKinds)]
			v, err := d.Apply(src, gens[src].Next(kind))
			w.mu.Lock()
			if err != nil {
				w.err = fmt.Errorf("LanceDB %v on %s: %w", kind, src, err)
				w.mu.Unlock()
				return
			}
			w.commits = append(w.commits, Commit{Source: src, Version: v, At: time.Now()})
			w.mu.Unlock()
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	c.mu.Lock()
	c.writer = w
	c.mu.Unlock()
	c.tb.Cleanup(w.Stop)
	return w
}

// Stop stops the writer after its current commit.
func (w *Writer) Stop() {
	w.stop()
	<-w.done
}

// Err is the writer's failure, if any.
func (w *Writer) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// Commits returns the commits so far.
func (w *Writer) Commits() []Commit {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]Commit(nil), w.commits...)
}

// Latest returns each source's newest version so far.
func (w *Writer) Latest() map[string]uint64 {
	out := map[string]uint64{}
	for _, c := range w.Commits() {
		out[c.Source] = max(out[c.Source], c.Version)
	}
	return out
}

// NextAfter waits until every source has a commit returned after t and
// returns the first such version of each.
func (w *Writer) NextAfter(ctx context.Context, sources []string, t time.Time, limit time.Duration) (map[string]uint64, error) {
	out := map[string]uint64{}
	err := poll(ctx, time.Now().Add(limit), func() (bool, error) {
		if err := w.Err(); err != nil {
			return false, err
		}
		clear(out)
		for _, c := range w.Commits() {
			if c.At.After(t) {
				if _, ok := out[c.Source]; !ok {
					out[c.Source] = c.Version
				}
			}
		}
		for _, s := range sources {
			if _, ok := out[s]; !ok {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		return nil, fmt.Errorf("no source commit after %v on every source: %w", t.Format(time.RFC3339Nano), err)
	}
	return out, nil
}
