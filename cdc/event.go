package cdc

import (
	"errors"
	"fmt"
	"time"

	"github.com/mvd-project/mvd/lance"
)

// Kind says what an Event reports.
type Kind int

const (
	// KindVersion is one new version of a watched table: From → To.
	KindVersion Kind = iota + 1
	// KindAdded is a table that appeared in the directory (at start, or
	// created later, or created again after a KindDropped). To is its
	// latest version; a watched table's KindVersion events continue
	// from To.
	KindAdded
	// KindDropped is a table that disappeared from the directory.
	KindDropped
	// KindRecreated is a table replaced by a new incarnation between two
	// looks (dropped and created again). Its row ids start over, so
	// anything derived from the old incarnation must be rebuilt. To is
	// the version watching resumes from.
	KindRecreated
	// KindError is a problem with one table that is not tied to a new
	// version (a manifest that cannot be read, a directory that cannot be
	// listed). The table is retried; other tables are unaffected.
	KindError
	// KindSynced is sent once, after the first complete look at the
	// directory: every table present at start has had its KindAdded.
	KindSynced
)

func (k Kind) String() string {
	switch k {
	case KindVersion:
		return "version"
	case KindAdded:
		return "added"
	case KindDropped:
		return "dropped"
	case KindRecreated:
		return "recreated"
	case KindError:
		return "error"
	case KindSynced:
		return "synced"
	}
	return fmt.Sprintf("kind(%d)", int(k))
}

// Event is one thing the Watcher noticed.
type Event struct {
	Kind Kind
	// Table is the table's name: its directory is DIR/Table.lance.
	Table string
	// Incarnation identifies this incarnation of the table; it changes
	// when the table is dropped and created again.
	Incarnation string
	// From and To are the versions of a KindVersion step (To = From+1
	// unless versions in between were cleaned up or unreadable). For
	// KindAdded and KindRecreated, To is the version watching resumes
	// from; for KindError, To is the version that failed, if any.
	From, To uint64
	// Changes is the row-id change set From → To (KindVersion, when Err
	// is nil, unless the table is watched with WatchVersions).
	Changes *lance.ChangeSet
	// Operation is the Lance operation that produced To ("append",
	// "delete", "update", "rewrite", "overwrite", ...), "" if unknown.
	Operation string
	// CommittedAt is the commit timestamp of To, when known.
	CommittedAt time.Time
	// NoticedAt is when the watcher woke up for the look that found To
	// (a file event, a poll): commit-to-notification tracing.
	NoticedAt time.Time
	// SchemaFingerprint identifies the columns of To's schema (ids,
	// names, types, nullability; not metadata): when it changes, a
	// consumer reading those columns may have to rebuild.
	SchemaFingerprint string
	// Err, on a KindVersion event, says why no change set could be
	// computed (errors.Is with lance.ErrNoStableRowIDs, lance.ErrCorrupt,
	// ErrHistoryGone, ...): the version exists, and whatever follows the
	// table must recompute from it. On KindError it is the problem.
	Err error
}

func (e Event) String() string {
	s := fmt.Sprintf("%s %s", e.Kind, e.Table)
	switch e.Kind {
	case KindVersion:
		s += fmt.Sprintf(" %d->%d", e.From, e.To)
	case KindAdded, KindRecreated:
		s += fmt.Sprintf(" @%d", e.To)
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// ErrHistoryGone means the version a change set would start from is no
// longer on disk (cleaned up), so the change set cannot be computed.
var ErrHistoryGone = errors.New("version history needed for the change set is gone")
