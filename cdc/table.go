package cdc

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"time"

	"github.com/mvd-project/mvd/lance"
)

// tableState is what the watcher knows of one table; owned by Run.
type tableState struct {
	name, root string

	present     bool
	src         *source
	incarnation string
	anchor      anchor

	watched   bool
	noChanges bool   // versions only (Watcher.WatchVersions)
	from      uint64 // requested start (0 = latest) until the watch is set up
	started   bool   // last/lastM are meaningful
	last      uint64 // the last version reported
	lastM     *snapshot

	lastErr string // last problem reported, to report each once
}

// anchor is a manifest whose identity stands for the incarnation: if it
// disappears or changes, the table may have been recreated.
type anchor struct {
	version uint64
	file    string
	ts      time.Time
	size    int64
	mtime   time.Time
}

func (ts *tableState) watch(from uint64) {
	ts.watched, ts.from, ts.started, ts.last, ts.lastM = true, from, false, 0, nil
}

func (ts *tableState) unwatch() {
	ts.watched, ts.from, ts.started, ts.last, ts.lastM = false, 0, false, 0, nil
}

// reset forgets the incarnation (after a drop or recreation); a watch
// restarts from the new incarnation's latest version.
func (ts *tableState) reset() {
	ts.present, ts.src, ts.incarnation, ts.anchor = false, nil, "", anchor{}
	if ts.watched {
		ts.watch(0)
	}
}

// scanTable looks at one table: appearance, drop, recreation, and for a
// watched table every version published since the last one reported. Only
// ctx errors are returned; table problems become events.
func (w *Watcher) scanTable(ctx context.Context, ts *tableState, full bool) error {
	if ts.present {
		changed, gone, err := w.anchorChanged(ctx, ts)
		switch {
		case err != nil:
			return w.emitErr(ctx, ts, 0, err)
		case gone:
			return w.dropped(ctx, ts)
		case changed:
			ts.reset()
			w.notify.forget(ts.root)
			return w.appear(ctx, ts, KindRecreated, full)
		}
		if ts.watched {
			return w.advance(ctx, ts, full)
		}
		return nil
	}
	return w.appear(ctx, ts, KindAdded, full)
}

// appear tries to open a table not (or no longer) known to be present.
func (w *Watcher) appear(ctx context.Context, ts *tableState, kind Kind, full bool) error {
	// Watch before looking, so that nothing published after the look
	// goes unnoticed: the table directory (for _versions/ appearing) and
	// _versions/ (for the first manifest).
	w.notify.add(ts.root)
	w.notify.add(versionsDir(ts.root))
	src, err := w.openSource(ctx, ts.root)
	if err != nil {
		if isMissing(err) {
			// Not a table yet (being created) or not at all.
			if kind == KindRecreated {
				return w.emit(ctx, Event{Kind: KindDropped, Table: ts.name})
			}
			return nil
		}
		return w.emitErr(ctx, ts, 0, err)
	}
	inc, anc, latest, err := identify(ctx, w.fs, src)
	if err != nil {
		if isMissing(err) {
			return nil
		}
		return w.emitErr(ctx, ts, 0, err)
	}
	ts.present, ts.src, ts.incarnation, ts.anchor, ts.lastErr = true, src, inc, anc, ""
	ev := Event{Kind: kind, Table: ts.name, Incarnation: inc, To: latest}
	var pending []Event
	if ts.watched {
		ev.To, pending = w.start(ctx, ts, latest)
	} else {
		// An unwatched table's commits are not news; its directory
		// entry (drop, recreation) is watched through DIR.
		w.notify.remove(versionsDir(ts.root))
		w.notify.remove(ts.root)
	}
	level := slog.LevelDebug // a database may hold many tables nobody watches
	if ts.watched || kind == KindRecreated {
		level = slog.LevelInfo
	}
	w.log.Log(ctx, level, "table "+kind.String(), "table", ts.name, "version", ev.To, "incarnation", inc)
	if err := w.emit(ctx, ev); err != nil {
		return err
	}
	for _, p := range pending {
		if err := w.emit(ctx, p); err != nil {
			return err
		}
	}
	if ts.watched {
		return w.advance(ctx, ts, full)
	}
	return nil
}

// start sets up a watch on a present table: it returns the version
// reporting resumes from and any event the request itself calls for.
func (w *Watcher) start(ctx context.Context, ts *tableState, latest uint64) (uint64, []Event) {
	from := ts.from
	ts.started, ts.from = true, 0
	if from == 0 || from == latest {
		ts.last = latest
		ts.lastM, _ = ts.src.checkout(ctx, latest) // nil: loaded again at the next step
		return latest, nil
	}
	if from > latest {
		// The caller's version belongs to an earlier incarnation.
		ts.last = latest
		ts.lastM, _ = ts.src.checkout(ctx, latest)
		return latest, []Event{{Kind: KindRecreated, Table: ts.name, Incarnation: ts.incarnation, To: latest}}
	}
	ts.last = from
	m, err := ts.src.checkout(ctx, from)
	if err == nil {
		ts.lastM = m
		return from, nil
	}
	if !isMissing(err) {
		return from, nil // unreadable: the first step reports it
	}
	// Cleaned up: no change set can start there. One step to the latest
	// says so, and watching goes on from the latest.
	ev := Event{Kind: KindVersion, Table: ts.name, Incarnation: ts.incarnation, From: from, To: latest,
		Err: fmt.Errorf("changes of %s %d..%d: %w", ts.name, from, latest, ErrHistoryGone)}
	ts.last = latest
	if ts.lastM, err = ts.src.checkout(ctx, latest); err == nil {
		ev.CommittedAt, ev.Operation = ts.lastM.Timestamp, ts.src.operation(ctx, ts.lastM)
	}
	return from, []Event{ev}
}

// advance reports every version after ts.last that is published now.
func (w *Watcher) advance(ctx context.Context, ts *tableState, full bool) error {
	if !ts.started {
		latest, err := latestVersion(ctx, ts.src)
		if err != nil {
			return w.tableErr(ctx, ts, 0, err)
		}
		_, pending := w.start(ctx, ts, latest)
		for _, p := range pending {
			if err := w.emit(ctx, p); err != nil {
				return err
			}
		}
	}
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		next := ts.last + 1
		m, err := ts.src.probe(ctx, next)
		if err == nil {
			if err := w.step(ctx, ts, m); err != nil {
				return err
			}
			continue
		}
		if !isMissing(err) {
			// Unreadable: reported once, retried; a full pass steps over
			// it once a later version is readable.
			if err := w.emitErr(ctx, ts, next, err); err != nil {
				return err
			}
		} else if errors.Is(err, lance.ErrNotATable) {
			return w.tableErr(ctx, ts, next, err)
		}
		if !full {
			return nil
		}
		return w.skipAhead(ctx, ts)
	}
}

// skipAhead lists the versions and steps to the first readable one after
// ts.last, when versions in between are gone or unreadable.
func (w *Watcher) skipAhead(ctx context.Context, ts *tableState) error {
	vs, err := ts.src.versions(ctx)
	if err != nil {
		return w.tableErr(ctx, ts, 0, err)
	}
	for _, v := range vs {
		if v <= ts.last+1 {
			continue // last+1 was just found missing or unreadable
		}
		m, err := ts.src.checkout(ctx, v)
		if err != nil {
			if !isMissing(err) {
				if err := w.emitErr(ctx, ts, v, err); err != nil {
					return err
				}
			}
			continue
		}
		if err := w.step(ctx, ts, m); err != nil {
			return err
		}
		return w.advance(ctx, ts, false)
	}
	return nil
}

// step reports ts.last → m.Version and makes m the last version.
func (w *Watcher) step(ctx context.Context, ts *tableState, m *snapshot) error {
	ev := Event{
		Kind: KindVersion, Table: ts.name, Incarnation: ts.incarnation,
		From: ts.last, To: m.Version, CommittedAt: m.Timestamp, Operation: ts.src.operation(ctx, m),
		SchemaFingerprint: fingerprint(m), NoticedAt: w.wokeAt,
	}
	if ts.noChanges {
		// Nobody reads the rows: no change set, and no previous
		// manifest needed for one.
		if err := w.emit(ctx, ev); err != nil {
			return err
		}
		ts.last, ts.lastM, ts.lastErr = m.Version, m, ""
		return nil
	}
	if ts.lastM == nil {
		prev, err := ts.src.checkout(ctx, ts.last)
		switch {
		case err == nil:
			ts.lastM = prev
		case isMissing(err):
			ev.Err = fmt.Errorf("changes of %s %d..%d: %w", ts.name, ts.last, m.Version, ErrHistoryGone)
		default:
			ev.Err = err
		}
	}
	if ev.Err == nil {
		cs, err := ts.src.changes(ctx, ts.lastM, m)
		ev.Changes, ev.Err = cs, err
	}
	if err := w.emit(ctx, ev); err != nil {
		return err
	}
	w.wb.add(ts.src.newFiles(ts.lastM, m))
	ts.last, ts.lastM, ts.lastErr = m.Version, m, ""
	return nil
}

// tableErr handles a failure to read a present table: if it is gone, a
// drop; otherwise a reported problem.
func (w *Watcher) tableErr(ctx context.Context, ts *tableState, version uint64, err error) error {
	if isMissing(err) {
		if _, serr := w.openSource(ctx, ts.root); serr != nil && isMissing(serr) {
			return w.dropped(ctx, ts)
		}
	}
	return w.emitErr(ctx, ts, version, err)
}

func (w *Watcher) dropped(ctx context.Context, ts *tableState) error {
	ev := Event{Kind: KindDropped, Table: ts.name, Incarnation: ts.incarnation}
	ts.reset()
	w.notify.forget(ts.root)
	w.log.Info("table dropped", "table", ts.name)
	return w.emit(ctx, ev)
}

// identify names the incarnation of an open table by its oldest published
// manifest (version 1 unless cleaned up): its version and commit time.
func identify(ctx context.Context, fsys interface {
	Stat(string) (fs.FileInfo, error)
}, src *source) (inc string, a anchor, latest uint64, err error) {
	vs, err := src.versions(ctx)
	if err != nil {
		return "", anchor{}, 0, err
	}
	m, err := src.checkout(ctx, vs[0])
	if err != nil {
		return "", anchor{}, 0, err
	}
	a, err = anchorOf(fsys, src, m)
	if err != nil {
		return "", anchor{}, 0, err
	}
	return fmt.Sprintf("%d.%d", m.Version, m.Timestamp.UnixNano()), a, vs[len(vs)-1], nil
}

func anchorOf(fsys interface {
	Stat(string) (fs.FileInfo, error)
}, src *source, m *snapshot) (anchor, error) {
	file := src.manifestPath(m)
	st, err := fsys.Stat(file)
	if err != nil {
		return anchor{}, err
	}
	return anchor{version: m.Version, file: file, ts: m.Timestamp, size: st.Size(), mtime: st.ModTime()}, nil
}

// anchorChanged checks the incarnation: gone means the table is no longer
// there at all; changed means a new incarnation (or one that cannot be
// told apart from one: whoever follows the table must start over, which is
// always correct).
func (w *Watcher) anchorChanged(ctx context.Context, ts *tableState) (changed, gone bool, err error) {
	st, err := w.fs.Stat(ts.anchor.file)
	if err == nil {
		if st.Size() == ts.anchor.size && st.ModTime().Equal(ts.anchor.mtime) {
			return false, false, nil
		}
		m, err := ts.src.checkout(ctx, ts.anchor.version)
		if err != nil {
			if isMissing(err) {
				return true, false, nil
			}
			return false, false, err
		}
		if !m.Timestamp.Equal(ts.anchor.ts) {
			return true, false, nil
		}
		ts.anchor.size, ts.anchor.mtime = st.Size(), st.ModTime()
		return false, false, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return false, false, err
	}
	if _, err := w.openSource(ctx, ts.root); err != nil {
		if isMissing(err) {
			return false, true, nil
		}
		return false, false, err
	}
	// The anchor was cleaned up. The last version reported still there,
	// unchanged, proves the same incarnation; re-anchor on it.
	if ts.lastM != nil {
		if a, err := anchorOf(w.fs, ts.src, ts.lastM); err == nil {
			if m, err := ts.src.checkout(ctx, ts.lastM.Version); err == nil && m.Timestamp.Equal(ts.lastM.Timestamp) {
				ts.anchor = a
				return false, false, nil
			}
		}
	}
	return true, false, nil
}

func latestVersion(ctx context.Context, src *source) (uint64, error) {
	vs, err := src.versions(ctx)
	if err != nil {
		return 0, err
	}
	return vs[len(vs)-1], nil
}
