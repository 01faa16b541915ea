package message

import (
	"time"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
)

func bitmap(ids ...uint64) *roaring64.Bitmap { return roaring64.BitmapOf(ids...) }

// step is a one-version change set of source "events".
func step(from uint64, ins, upd, del []uint64) *ChangeSet {
	return &ChangeSet{
		Source: "events", Incarnation: "inc1", From: from, To: from + 1, Op: "append",
		Inserted: bitmap(ins...), Updated: bitmap(upd...), Deleted: bitmap(del...),
		SchemaFingerprint: "fp1", CommittedAt: time.Date(2026, 12, 1, 9, 0, int(from), 0, time.UTC),
	}
}

// refreshOf is a successful refresh notification of view at version.
func refreshOf(view string, version uint64) *Notification {
	return &Notification{
		View: view, Source: "events", Mode: ModeIncremental, RowsWritten: 1, SourceVersion: version + 5,
		Version: version, LagMS: 3.1, CommittedAt: time.Now(),
	}
}
