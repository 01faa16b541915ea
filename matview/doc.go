// Package matview is mvd's Go API for materialized views over Lance tables:
// a DB is a database directory (table NAME at DIR/NAME.lance, as LanceDB);
// CreateView, OpenView, ListViews and DropView manage views; View.Refresh
// brings one up to date — incrementally at the cost of the change where it
// can be reconciled, by rebuild where it must — in exactly one Lance commit
// holding its rows and its watermark, so a crash never duplicates or loses
// rows. Views are LanceDB 0.39 views both ways: the same mv.definition and
// mv.* metadata, the same schema, the same refresh modes and results.
//
// Conflicts: a refresh plans on view version V and publishes V+1
// put-if-not-exists, refusing any rebase; when another commit took V+1
// (another refresh in this or another process, LanceDB's own refresh, any
// write to the view) it fails with ErrConflict naming the winning version
// and leaves nothing behind. This rests on the Lance commit, not on a lock.
//
// Errors wrap ErrConflict, ErrNotAView, ErrNotFound, ErrExists,
// ErrUnsupported, ErrInvalid or ErrStorage, and read as one line (LanceDB's text where
// LanceDB has one).
package matview
