// Package incremental brings a materialized view from the source version of
// its watermark to a newer one at a cost that follows the change, not the
// tables: the change sets of the source's row-level steps (lance.Changes,
// from manifests, sequences and deletion files) compose (Compose), the
// changed rows from the target version (whole new
// fragments scanned, the other rows taken by row id), and the view rows to
// evict from the provenance index (Step).
package incremental

import (
	"github.com/RoaringBitmap/roaring/v2/roaring64"

	"github.com/mvd-project/mvd/lance"
)

// Compose returns the change set of two consecutive spans (a, then b);
// a nil a is the empty span. Stable row ids are never reused, which makes
// the algebra simple.
func Compose(a, b *lance.ChangeSet) *lance.ChangeSet {
	if a == nil {
		return b
	}
	ins := roaring64.Or(a.Inserted, b.Inserted)
	ins.AndNot(b.Deleted)
	del := roaring64.Or(a.Deleted, b.Deleted)
	del.AndNot(a.Inserted)
	upd := a.Updated.Clone()
	upd.AndNot(b.Deleted)
	upd.Or(b.Updated)
	upd.AndNot(ins)
	return &lance.ChangeSet{From: a.From, To: b.To, Inserted: ins, Updated: upd, Deleted: del}
}
