package lance

import (
	"bytes"
	"context"
	"fmt"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
)

// refuseRebase is the conflict a RebaseNever commit returns: version won
// the race, whatever it did.
func (t *Table) refuseRebase(c *Commit, readVersion, won uint64) error {
	op := OpUnknown
	if m, err := t.checkoutManifest(won); err == nil {
		if tx, err := t.transaction(m); err == nil && tx != nil {
			op = tx.Operation
		}
	}
	return &ConflictError{ReadVersion: readVersion, Version: won, Operation: op,
		Reason: fmt.Sprintf("the %s was planned on version %d and asked never to be rebased", describeCommit(c), readVersion)}
}

// checkRebase decides whether c, planned on readVersion and last built on
// base, may be rebuilt on latest. It reads the manifest and transaction of
// every version in between and returns a *ConflictError for the first one
// that is incompatible.
func (t *Table) checkRebase(ctx context.Context, c *Commit, readVersion uint64, base, latest *Manifest) error {
	if c.Overwrite && !c.touchesMetadata() {
		return nil // an overwrite replaces whatever was committed meanwhile
	}
	prev := base
	for v := base.Version + 1; v <= latest.Version; v++ {
		cur := latest
		if v != latest.Version {
			var err error
			if cur, err = t.checkoutManifest(v); err != nil {
				return err
			}
		}
		tx, err := t.transaction(cur)
		if err != nil {
			return err
		}
		op := OpUnknown
		if tx != nil {
			op = tx.Operation
		}
		conflict := func(reason string, args ...any) error {
			return &ConflictError{ReadVersion: readVersion, Version: v, Operation: op, Reason: fmt.Sprintf(reason, args...)}
		}
		if !c.Overwrite && !op.RowPreserving() {
			return conflict("a %s cannot be rebased over it", describeCommit(c))
		}
		if c.InsertedRows != nil && tx != nil && tx.pb.GetUpdate() != nil {
			theirs, ok, opaque, err := insertedRowsBloom(tx.pb.GetUpdate())
			if err != nil {
				return err
			}
			if ok && (opaque || bloomMightIntersect(theirs, c.insertedRowsBloom())) {
				return conflict("both are updates whose inserted-row keys may intersect")
			}
		}
		if k := changedKey(prev, cur, c.metadataKeys()); k != "" {
			return conflict("both change schema metadata key %q", k)
		}
		if c.hasDeletes() && op != OpAppend && op != OpCreateIndex && op != OpReserveFragments && op != OpUpdateConfig {
			cs, err := t.changesBetween(ctx, prev, cur)
			if err != nil {
				return err
			}
			touched := roaring64.Or(cs.Deleted, cs.Updated)
			if touched.Intersects(c.DeleteRowIDs) {
				touched.And(c.DeleteRowIDs)
				return conflict("it deleted or updated %d of the rows to delete (e.g. row id %d)", touched.GetCardinality(), touched.Minimum())
			}
		}
		prev = cur
	}
	if len(c.Rewrite) > 0 {
		return checkRewriteRebase(c, readVersion, base, latest)
	}
	return nil
}

// changedKey returns the first of keys whose schema metadata value differs
// between a and b, or "".
func changedKey(a, b *Manifest, keys []string) string {
	am, bm := a.pb.GetSchemaMetadata(), b.pb.GetSchemaMetadata()
	for _, k := range keys {
		av, aok := am[k]
		bv, bok := bm[k]
		if aok != bok || !bytes.Equal(av, bv) {
			return k
		}
	}
	return ""
}

func describeCommit(c *Commit) string {
	switch {
	case c.Overwrite:
		return "overwrite"
	case len(c.Rewrite) > 0:
		return "rewrite"
	case c.hasDeletes() && len(c.Fragments) > 0:
		return "delete-and-append"
	case c.hasDeletes():
		return "delete"
	case len(c.Fragments) > 0:
		return "append"
	}
	return "schema metadata update"
}
