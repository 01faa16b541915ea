package wire

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/stream"
	"github.com/mvd-project/mvd/vfs"
)

// errBacklogged is returned by PublishChange for a change set queued
// behind earlier ones that are not published yet (NATS was away): it goes
// out with them, in order, once NATS is back.
var errBacklogged = errors.New("queued behind change sets not yet published")

// republishEvery is how often the backlog is retried while NATS is away.
const republishEvery = 250 * time.Millisecond

// span is a run of consecutive source versions of one incarnation whose
// change sets were not published.
type span struct {
	incarnation string
	from, to    uint64
	op          string    // Lance operation of a single step ("" when unknown)
	committedAt time.Time // commit time of to
}

// backlog keeps, per source, the version spans not yet published: only
// ranges, so memory stays bounded however long NATS is away. Their change
// sets are computed from the source when they are republished.
type backlog struct {
	mu    sync.Mutex
	spans map[string][]span
	kick  chan struct{}
}

func newBacklog() *backlog {
	return &backlog{spans: map[string][]span{}, kick: make(chan struct{}, 1)}
}

// has reports whether source has spans waiting.
func (q *backlog) has(source string) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.spans[source]) > 0
}

// add queues a span; it extends the last one when consecutive. Spans of
// an older incarnation are dropped: no consumer can use them.
func (q *backlog) add(source string, s span) {
	q.mu.Lock()
	ss := q.spans[source]
	if n := len(ss); n > 0 && ss[n-1].incarnation != s.incarnation {
		ss = nil
	}
	if n := len(ss); n > 0 && ss[n-1].to == s.from {
		ss[n-1].to, ss[n-1].committedAt, ss[n-1].op = s.to, s.committedAt, ""
	} else {
		ss = append(ss, s)
	}
	q.spans[source] = ss
	q.mu.Unlock()
	select {
	case q.kick <- struct{}{}:
	default:
	}
}

// first is the oldest span of each source.
func (q *backlog) first() map[string]span {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := map[string]span{}
	for src, ss := range q.spans {
		if len(ss) > 0 {
			out[src] = ss[0]
		}
	}
	return out
}

// done removes a published span (the oldest of source, which may have
// been extended meanwhile: only what was published goes).
func (q *backlog) done(source string, s span) {
	q.mu.Lock()
	defer q.mu.Unlock()
	ss := q.spans[source]
	if len(ss) == 0 || ss[0].incarnation != s.incarnation || ss[0].from != s.from {
		return
	}
	if ss[0].to > s.to {
		ss[0].from = s.to
		return
	}
	ss = ss[1:]
	if len(ss) == 0 {
		delete(q.spans, source)
		return
	}
	q.spans[source] = ss
}

// pending counts the spans waiting (tests, logs).
func (q *backlog) pending() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	n := 0
	for _, ss := range q.spans {
		n += len(ss)
	}
	return n
}

// republish runs until ctx is done: whenever NATS is connected and spans
// wait, each source's spans are published, oldest first, as one change
// set per span computed from the source (without row ids if they cannot
// be computed: consumers then compute the step themselves).
func (b *Bus) republish(ctx context.Context, conn *stream.Conn) {
	t := time.NewTicker(republishEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-b.backlog.kick:
		case <-t.C:
		}
		for b.backlog.pending() > 0 && conn.Connected() && ctx.Err() == nil {
			progressed := false
			for src, s := range b.backlog.first() {
				cs := b.spanChangeSet(ctx, src, s)
				pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
				_, err := conn.PublishChangeSet(pctx, cs)
				cancel()
				if err != nil {
					b.log.Debug("republish change set", "source", src, "from", s.from, "to", s.to, "err", err)
					continue
				}
				b.backlog.done(src, s)
				progressed = true
				b.log.Info("republished change sets missed while NATS was away", "source", src, "from", s.from, "to", s.to, "ids_omitted", cs.IDsOmitted)
			}
			if !progressed {
				break
			}
		}
	}
}

// spanChangeSet computes a span's change set from the source table.
func (b *Bus) spanChangeSet(ctx context.Context, source string, s span) *stream.ChangeSet {
	out := &stream.ChangeSet{Source: source, Incarnation: s.incarnation, From: s.from, To: s.to, Op: stream.OpMultiple, CommittedAt: s.committedAt}
	ch, err := b.changes(ctx, source, s.from, s.to)
	if err != nil {
		b.log.Debug("recompute change set for republish; publishing it without row ids", "source", source, "from", s.from, "to", s.to, "err", err)
		out.IDsOmitted = true
		return out
	}
	if s.to == s.from+1 && s.op != "" {
		out.Op = s.op
	}
	out.Inserted, out.Updated, out.Deleted = ch.Inserted, ch.Updated, ch.Deleted
	return out
}

func (b *Bus) changes(ctx context.Context, source string, from, to uint64) (*lance.ChangeSet, error) {
	t, err := lance.Open(ctx, vfs.OS(), filepath.Join(b.cfg.DB, source+".lance"))
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", source, err)
	}
	return t.Changes(ctx, from, to)
}
