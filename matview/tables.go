package matview

import (
	"context"
	"fmt"
	"time"

	"github.com/mvd-project/mvd/lance"
)

// Changes is the row-id change set of table (a source or a view) from
// version from to version to, computed from its manifests: what the daemon
// republishes for versions whose change sets NATS missed.
func (db *DB) Changes(ctx context.Context, table string, from, to uint64) (*lance.ChangeSet, error) {
	t, err := db.openTable(ctx, table)
	if err != nil {
		return nil, err
	}
	cs, err := t.Changes(ctx, from, to)
	if err != nil {
		return nil, fmt.Errorf("changes of '%s' from version %d to %d: %w", table, from, to, err)
	}
	return cs, nil
}

// CommitTime is when version of table was committed, from its manifest's
// timestamp (zero if the manifest has none).
func (db *DB) CommitTime(ctx context.Context, table string, version uint64) (time.Time, error) {
	t, err := db.openTable(ctx, table)
	if err != nil {
		return time.Time{}, err
	}
	s, err := t.Checkout(ctx, version)
	if err != nil {
		return time.Time{}, fmt.Errorf("commit time of '%s' version %d: %w", table, version, err)
	}
	return s.Timestamp, nil
}

// LatestVersion is the newest version of table.
func (db *DB) LatestVersion(ctx context.Context, table string) (uint64, error) {
	t, err := db.openTable(ctx, table)
	if err != nil {
		return 0, err
	}
	return t.LatestVersion(ctx)
}

// Watermark is the watermark of the latest commit of view (Valid false
// for a view never refreshed), read from its manifest alone: the
// definition is not decoded.
func (db *DB) Watermark(ctx context.Context, view string) (Watermark, error) {
	t, err := db.openTable(ctx, view)
	if err != nil {
		return Watermark{}, err
	}
	m, err := t.Latest(ctx)
	if err != nil {
		return Watermark{}, fmt.Errorf("read view '%s': %w", view, err)
	}
	if _, ok := m.Schema.Metadata[KeyDefinition]; !ok {
		return Watermark{}, errorf(ErrNotAView, nil, "Table '%s' is not a materialized view", view)
	}
	return watermarkOf(m.Schema.Metadata), nil
}
