package lance

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
)

// Snapshot is one table at one version: the decoded manifest of that
// version (embedded, so s.Version, s.Schema and s.Fragments read it) and
// the table it belongs to, which is everything a reader needs. Every read
// hangs off it (Scan, Take, Locate, CountRows, ScanRowMeta, FragmentRows,
// Transaction, Changes), and a commit is made against one
// (Table.Commit), so the version a change was planned on cannot be lost.
//
// A Snapshot is immutable and safe for concurrent use; it holds no open
// files. Table.Checkout returns one.
type Snapshot struct {
	*Manifest
	table *Table
}

// Table returns the table the snapshot belongs to.
func (s *Snapshot) Table() *Table { return s.table }

// BatchReader is a stream of record batches: what Scan and Take return.
// Next returns io.EOF after the last batch; the caller releases each batch.
// A BatchReader is not safe for concurrent use; Close releases what it
// holds and may be called at any time, more than once.
type BatchReader interface {
	// Schema is the schema of every batch.
	Schema() *arrow.Schema
	// Next returns the next batch, or io.EOF. It stops with ctx.Err()
	// when ctx is done, checked between pages and fragments.
	Next(ctx context.Context) (arrow.RecordBatch, error)
	// Close releases open files and decoded pages.
	Close() error
}

var (
	_ BatchReader = (*Scanner)(nil)
	_ BatchReader = (*Taker)(nil)
)

// ctxErr wraps a done context's error with the snapshot's table and
// version, so a cancelled read still says what it was reading.
func (s *Snapshot) ctxErr(ctx context.Context, op string) error {
	if err := ctx.Err(); err != nil {
		return s.table.wrap(s.Version, op, err)
	}
	return nil
}

// ChangesSince returns the change set from the older snapshot from to s;
// it is Changes(ctx, from, s).
func (s *Snapshot) ChangesSince(ctx context.Context, from *Snapshot) (*ChangeSet, error) {
	return Changes(ctx, from, s)
}
