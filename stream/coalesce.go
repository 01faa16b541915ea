package stream

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/RoaringBitmap/roaring/v2/roaring64"

	"github.com/mvd-project/mvd/lance"
)

// Compose merges consecutive change sets of one source incarnation (each
// From equal to the previous To) into one from the first From to the last
// To, by lance.Compose's rule (stable row ids are never reused, so per
// row: inserted then deleted → nothing, inserted then updated → inserted,
// updated then deleted → deleted, updated then updated → updated).
// It fails for gaps, overlaps, mixed incarnations and change sets without
// row ids. The inputs are not modified.
func Compose(sets ...*ChangeSet) (*ChangeSet, error) {
	if len(sets) == 0 {
		return nil, fmt.Errorf("stream: compose no change sets")
	}
	first := sets[0]
	out := &ChangeSet{
		Source: first.Source, Incarnation: first.Incarnation, From: first.From, To: first.From,
		Inserted: roaring64.New(), Updated: roaring64.New(), Deleted: roaring64.New(),
	}
	for _, cs := range sets {
		switch {
		case cs.Source != out.Source || cs.Incarnation != out.Incarnation:
			return nil, fmt.Errorf("stream: compose change sets of %s/%s and %s/%s", out.Source, out.Incarnation, cs.Source, cs.Incarnation)
		case cs.From != out.To:
			return nil, fmt.Errorf("stream: compose change set %d..%d after %d..%d: not consecutive", cs.From, cs.To, out.From, out.To)
		case cs.IDsOmitted:
			return nil, fmt.Errorf("stream: compose change set %d..%d: its row ids were omitted", cs.From, cs.To)
		}
		// The rule is lance.Compose's, the one incremental composes with.
		c := lance.Compose(
			&lance.ChangeSet{Inserted: out.Inserted, Updated: out.Updated, Deleted: out.Deleted},
			&lance.ChangeSet{Inserted: cs.Inserted, Updated: cs.Updated, Deleted: cs.Deleted})
		out.Inserted, out.Updated, out.Deleted = c.Inserted, c.Updated, c.Deleted
		out.To = cs.To
		out.Op = cs.Op
		out.SchemaFingerprint = cs.SchemaFingerprint
		out.CommittedAt = cs.CommittedAt
	}
	if out.To != out.From+1 {
		out.Op = OpMultiple
	}
	out.Counts = Counts{Inserted: out.Inserted.GetCardinality(), Updated: out.Updated.GetCardinality(), Deleted: out.Deleted.GetCardinality()}
	return out, nil
}

// Coalesce turns the batch into one change set from watermark (the view's
// source version) to the newest version in the batch. Change sets the view
// already reflects (To <= watermark: redeliveries, republished ranges) are
// ignored, as are exact duplicates. It returns:
//
//   - (cs, true): cs covers watermark..MaxTo() and can be applied;
//   - (nil, true): the view already reflects everything in the batch;
//   - (nil, false): the batch cannot cover the step (a change set is
//     missing, overlaps the watermark, omits its row ids or belongs to
//     another incarnation of the source); compute the change set from the
//     source, from watermark to MaxTo().
//
// incarnation is the source incarnation the view was built from.
func (b *Batch) Coalesce(watermark uint64, incarnation string) (*ChangeSet, bool) {
	var todo []*ChangeSet
	for _, cs := range b.ChangeSets {
		if cs.Incarnation != incarnation {
			return nil, false
		}
		if cs.To > watermark {
			todo = append(todo, cs)
		}
	}
	if len(todo) == 0 {
		return nil, true
	}
	slices.SortStableFunc(todo, func(a, b *ChangeSet) int {
		if a.From != b.From {
			return cmp.Compare(a.From, b.From)
		}
		return cmp.Compare(a.To, b.To)
	})
	todo = slices.CompactFunc(todo, func(a, b *ChangeSet) bool { return a.From == b.From && a.To == b.To })
	if todo[0].From != watermark {
		return nil, false
	}
	cs, err := Compose(todo...)
	if err != nil {
		return nil, false
	}
	return cs, true
}
