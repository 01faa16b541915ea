package daemon

import (
	"context"
	"io"
	"time"

	"github.com/mvd-project/mvd/matview"
	"github.com/mvd-project/mvd/message"
)

// Catalog is the database's materialized views as the daemon needs them
// (package matview provides it). Views and View are called from one
// goroutine; Open also from owners, to open a view again.
type Catalog interface {
	// Views lists every materialized view in the database now.
	Views(ctx context.Context) ([]ViewSpec, error)
	// View describes one view; ok is false if name is not a view (or no
	// longer exists).
	View(ctx context.Context, name string) (spec ViewSpec, ok bool, err error)
	// Open returns the refresher of the named view. The daemon opens each
	// view once and refreshes it from one goroutine.
	Open(ctx context.Context, name string) (Refresher, error)
}

// ViewSpec is what the daemon schedules a view by.
type ViewSpec struct {
	// Name is the view's table name in the database.
	Name string
	// Source is the name of the table (or view) the view reads.
	Source string
	// Policy is the view's auto-refresh policy, from its metadata.
	Policy matview.Policy
	// Err is set (and only Name) for a view the catalog lists but cannot
	// read: the server logs and counts it, and does not serve it.
	Err error
	// Unrefreshed is set for a view that was never refreshed (it has no
	// watermark); CommittedAt is then its latest commit's time, its
	// creation: the daemon leaves such a view to its creator's first
	// refresh for a grace period.
	Unrefreshed bool
	CommittedAt time.Time
}

// Bus carries change sets and refresh notifications (package stream
// provides it over JetStream: embedded nats-server or an external one).
// A Bus that is also a FeedBus feeds each view's owner from the view's
// durable consumer; the watcher wakes owners directly only while that is
// not possible, so the bus is not a dependency of refreshing: if it is
// down, views stay fresh.
type Bus interface {
	// Start connects (starting the embedded server if that is the
	// configuration) and returns the URL and token clients connect with.
	Start(ctx context.Context) (url, token string, err error)
	// PublishChange publishes a change set, failing at once while NATS
	// is away (the daemon keeps it and publishes it again later).
	PublishChange(ctx context.Context, cs *message.ChangeSet) error
	// PublishRefreshed publishes a refresh notification.
	PublishRefreshed(ctx context.Context, n *message.Notification) error
	// Close disconnects (and stops the embedded server).
	Close() error
}

// ViewForgetter is a History that also keeps state per view (package
// checkpoint: the kept source state at the view's watermark, the refresh
// history). The daemon calls ForgetView once a view is dropped, after its
// owner has stopped, so nothing of the dropped view outlives it in the
// store (a view created again under the name starts afresh). The job
// history is not the view's: it stays.
type ViewForgetter interface {
	ForgetView(ctx context.Context, view string) error
}

// History records refresh attempts (package checkpoint provides it: the
// refresh history in Badger) and reads them back. Failures are logged,
// never fatal: the view's own commit is the record that matters. Its
// methods are safe for concurrent use.
type History interface {
	// RecordRefreshes stores attempts, in order, in one write where it
	// can (the daemon's history writer batches them off the refresh path).
	RecordRefreshes(ctx context.Context, rs []HistoryRecord) error
	// WriteHistory writes up to limit of view's most recent records,
	// newest first, as one JSON array (what `mvd view show` prints).
	WriteHistory(ctx context.Context, w io.Writer, view string, limit int) error
}

// HistoryRecord is one refresh attempt with what the daemon knows of its
// source.
type HistoryRecord struct {
	Outcome
	// Source is the view's source table and SourceIncarnation its
	// incarnation as the watcher last saw it ("" if not seen yet).
	Source, SourceIncarnation string
}
