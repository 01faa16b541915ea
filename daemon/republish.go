package daemon

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/mvd-project/mvd/cdc"
	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/message"
)

// ChangeSource reads what the watcher's events do not carry from the
// tables themselves (package matview provides it): the change set of a
// span of versions, recomputed when it is republished after a NATS
// outage; and, for staleness, versions, their commit times and the
// views' watermarks. Its methods are safe for concurrent use.
type ChangeSource interface {
	// Changes is the change set of table from version from to version to.
	Changes(ctx context.Context, table string, from, to uint64) (*lance.ChangeSet, error)
	// CommitTime is the commit timestamp of one version of table, from
	// its manifest.
	CommitTime(ctx context.Context, table string, version uint64) (time.Time, error)
	// LatestVersion is the newest version of table.
	LatestVersion(ctx context.Context, table string) (uint64, error)
	// Watermark is the source version the latest commit of view reflects
	// (ok false, and 0, for a view never refreshed).
	Watermark(ctx context.Context, view string) (version uint64, ok bool, err error)
}

// errBacklogged is returned for a change set queued behind earlier ones
// of its source that are not published yet (NATS was away): it goes out
// with them, in order, once NATS is back.
var errBacklogged = errors.New("queued behind change sets not yet published")

// republishEvery is how often the backlog is retried while NATS is away.
const republishEvery = 250 * time.Millisecond

// republishTimeout bounds one republish.
const republishTimeout = 5 * time.Second

// publisher publishes the watcher's change sets on the bus, and keeps
// those it could not publish (NATS away) as version spans in a backlog
// that its goroutine (run, owned by Server.Run) republishes in order,
// recomputing each span's change set from the source.
type publisher struct {
	bus     Bus
	changes ChangeSource // nil: republished without row ids
	log     *slog.Logger
	backlog *backlog
}

func newPublisher(bus Bus, changes ChangeSource, log *slog.Logger) *publisher {
	return &publisher{bus: bus, changes: changes, log: log, backlog: newBacklog()}
}

// changeSetOf is the message of one watcher event: its change set, or
// without row ids when the watcher could not compute them (consumers then
// compute the step from the source).
func changeSetOf(ev cdc.Event) *message.ChangeSet {
	op := ev.Operation
	if ev.To != ev.From+1 || op == "" {
		op = message.OpMultiple
	}
	cs := &message.ChangeSet{
		Source: ev.Table, Incarnation: ev.Incarnation, From: ev.From, To: ev.To, Op: op,
		SchemaFingerprint: ev.SchemaFingerprint, CommittedAt: ev.CommittedAt,
	}
	if ev.Changes != nil {
		cs.Inserted, cs.Updated, cs.Deleted = ev.Changes.Inserted, ev.Changes.Updated, ev.Changes.Deleted
	} else {
		cs.IDsOmitted = true
	}
	return cs
}

// publish publishes one version event's change set. If NATS is away, or
// earlier change sets of the source still wait, the span is queued and an
// error returned: the daemon then wakes the views directly, and the
// change set is republished, in order, once NATS is back.
func (p *publisher) publish(ctx context.Context, ev cdc.Event) error {
	s := span{incarnation: ev.Incarnation, from: ev.From, to: ev.To, op: ev.Operation, fingerprint: ev.SchemaFingerprint, committedAt: ev.CommittedAt}
	if p.backlog.has(ev.Table) {
		p.backlog.add(ev.Table, s)
		return errBacklogged
	}
	if err := p.bus.PublishChange(ctx, changeSetOf(ev)); err != nil {
		p.backlog.add(ev.Table, s)
		return err
	}
	return nil
}

// run republishes the backlog until ctx is done: whenever spans wait,
// each source's spans are published, oldest first, as one change set per
// span computed from the source (without row ids if that fails).
func (p *publisher) run(ctx context.Context) {
	t := time.NewTicker(republishEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			if n := p.backlog.pending(); n > 0 {
				p.log.Info("stopping with change sets not published (the views were refreshed from the source)", "spans", n)
			}
			return
		case <-p.backlog.kick:
		case <-t.C:
		}
		for p.backlog.pending() > 0 && ctx.Err() == nil {
			if !p.republishFirst(ctx) {
				break
			}
		}
	}
}

// republishFirst publishes the oldest span of every source; it reports
// whether any went out.
func (p *publisher) republishFirst(ctx context.Context) bool {
	progressed := false
	for src, s := range p.backlog.first() {
		cs := p.spanChangeSet(ctx, src, s)
		pctx, cancel := context.WithTimeout(ctx, republishTimeout)
		err := p.bus.PublishChange(pctx, cs)
		cancel()
		if err != nil {
			p.log.Debug("republish change set", "source", src, "from", s.from, "to", s.to, "err", err)
			continue
		}
		p.backlog.done(src, s)
		progressed = true
		p.log.Info("republished change sets missed while NATS was away", "source", src, "from", s.from, "to", s.to, "ids_omitted", cs.IDsOmitted)
	}
	return progressed
}

// spanChangeSet computes a span's change set from the source table.
func (p *publisher) spanChangeSet(ctx context.Context, source string, s span) *message.ChangeSet {
	out := &message.ChangeSet{Source: source, Incarnation: s.incarnation, From: s.from, To: s.to, Op: message.OpMultiple,
		SchemaFingerprint: s.fingerprint, CommittedAt: s.committedAt}
	var ch *lance.ChangeSet
	err := errors.New("no change source")
	if p.changes != nil {
		ch, err = p.changes.Changes(ctx, source, s.from, s.to)
	}
	if err != nil {
		p.log.Debug("recompute change set for republish; publishing it without row ids", "source", source, "from", s.from, "to", s.to, "err", err)
		out.IDsOmitted = true
		return out
	}
	if s.to == s.from+1 && s.op != "" {
		out.Op = s.op
	}
	out.Inserted, out.Updated, out.Deleted = ch.Inserted, ch.Updated, ch.Deleted
	return out
}

// span is a run of consecutive source versions of one incarnation whose
// change sets were not published.
type span struct {
	incarnation string
	from, to    uint64
	op          string    // Lance operation of a single step ("" when unknown)
	fingerprint string    // schema fingerprint at to
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
		last := &ss[n-1]
		last.to, last.committedAt, last.fingerprint, last.op = s.to, s.committedAt, s.fingerprint, ""
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

// pending counts the spans waiting.
func (q *backlog) pending() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	n := 0
	for _, ss := range q.spans {
		n += len(ss)
	}
	return n
}

// startBackground starts the server's goroutines besides the owners: the
// history writer and, once the bus is up, the publisher's backlog; the
// function it returns stops them (after the owners: Run defers it
// before their stop) and waits for them.
func (s *Server) startBackground() (stop func()) {
	stopHistory := s.startHistory()
	if !s.busUp.Load() {
		return stopHistory
	}
	stopPub := s.startPublisher()
	stopOutbox := s.startOutbox()
	return func() {
		stopOutbox()
		stopPub()
		stopHistory()
	}
}

// startOutbox starts the goroutine that publishes the refresh
// notifications kept while NATS was away; the function it returns stops
// it and waits for it.
func (s *Server) startOutbox() (stop func()) {
	ob := newOutbox(s.deps.Bus, s.log)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		ob.run(ctx)
	}()
	s.outbox.Store(ob)
	return func() {
		cancel()
		<-done
	}
}

// startPublisher starts the server's publisher and its backlog goroutine;
// the function it returns stops the goroutine and waits for it.
func (s *Server) startPublisher() (stop func()) {
	s.pub = newPublisher(s.deps.Bus, s.deps.Changes, s.log)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.pub.run(ctx)
	}()
	return func() {
		cancel()
		<-done
	}
}
