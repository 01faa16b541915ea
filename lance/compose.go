package lance

import "github.com/RoaringBitmap/roaring/v2/roaring64"

// Compose returns the change set of two consecutive spans: a (From to V),
// then b (V to To); a nil a is the empty span, and nil sets are empty.
// It is the one composition rule of change sets: incremental composes the
// segments of a span with it, stream the change sets of a batch. Stable
// row ids are never reused, so per row:
//
//	inserted then deleted  → nothing (not live at From, nor at To)
//	inserted then updated  → inserted
//	updated  then deleted  → deleted
//	updated  then updated  → updated
//
// The inputs are not modified; the result's Stats are the sum of both.
func Compose(a, b *ChangeSet) *ChangeSet {
	if a == nil {
		return b
	}
	aIns, aUpd, aDel := orEmpty(a.Inserted), orEmpty(a.Updated), orEmpty(a.Deleted)
	bIns, bUpd, bDel := orEmpty(b.Inserted), orEmpty(b.Updated), orEmpty(b.Deleted)
	ins := roaring64.Or(aIns, bIns)
	ins.AndNot(bDel)
	del := roaring64.Or(aDel, bDel)
	del.AndNot(aIns)
	upd := roaring64.Or(aUpd, bUpd)
	upd.AndNot(bDel)
	upd.AndNot(ins)
	return &ChangeSet{
		From: a.From, To: b.To, Inserted: ins, Updated: upd, Deleted: del,
		Stats: ChangeStats{
			FragmentsSkipped:  a.Stats.FragmentsSkipped + b.Stats.FragmentsSkipped,
			FragmentsExamined: a.Stats.FragmentsExamined + b.Stats.FragmentsExamined,
		},
	}
}

func orEmpty(b *roaring64.Bitmap) *roaring64.Bitmap {
	if b == nil {
		return roaring64.New()
	}
	return b
}
