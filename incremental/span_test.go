package incremental

import (
	"testing"

	"github.com/RoaringBitmap/roaring/v2/roaring64"

	"github.com/mvd-project/mvd/lance"
)

func cs(ins, upd, del []uint64) *lance.ChangeSet {
	return &lance.ChangeSet{Inserted: roaring64.BitmapOf(ins...), Updated: roaring64.BitmapOf(upd...), Deleted: roaring64.BitmapOf(del...)}
}

// TestCompose checks the change set of two consecutive spans against what
// happened to each row (stable row ids are never reused).
func TestCompose(t *testing.T) {
	// Rows 1..3 live at the start. Span a: insert 10, 11; update 1; delete 2.
	// Span b: update 10 and 3; delete 11 and 1; insert 12.
	a := cs([]uint64{10, 11}, []uint64{1}, []uint64{2})
	b := cs([]uint64{12}, []uint64{10, 3}, []uint64{11, 1})
	got := Compose(a, b)
	want := cs([]uint64{10, 12}, []uint64{3}, []uint64{1, 2})
	for name, pair := range map[string][2]*roaring64.Bitmap{
		"inserted": {got.Inserted, want.Inserted}, "updated": {got.Updated, want.Updated}, "deleted": {got.Deleted, want.Deleted},
	} {
		if !pair[0].Equals(pair[1]) {
			t.Errorf("%s: %v, want %v", name, pair[0].ToArray(), pair[1].ToArray())
		}
	}
	if Compose(nil, b) != b {
		t.Error("composing with the empty span changed the set")
	}
}
