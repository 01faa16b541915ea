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
