// Package incremental brings a materialized view from the source version of
// its watermark to a newer one at a cost that follows the change, not the
// tables: the change set comes from lance manifests, sequences and deletion
// files (Analyze), the changed rows from the target version (whole new
// fragments scanned, the other rows taken by row id), and the view rows to
// evict from the provenance index (Step).
package incremental

import (
	"context"
	"errors"
	"fmt"

	"github.com/RoaringBitmap/roaring/v2/roaring64"

	"github.com/mvd-project/mvd/lance"
)

// Span is what happened to the source between two versions, as far as a
// view reading some of its columns is concerned.
type Span struct {
	From, To uint64
	// Rebuild is non-empty when the span cannot be reconciled row by row
	// (an overwrite, a restore, a type change of a read column...): it
	// says why.
	Rebuild string
	// Changes are the row changes that matter to the view: column-only
	// steps that leave every read column as it was (adding a column,
	// dropping an unread one) are left out, because they touch every row's
	// version without changing what the view reads.
	Changes *lance.ChangeSet
	// Versions counts the source versions walked.
	Versions int
}

// rowLevel lists operations whose effect Changes describes exactly.
func rowLevel(op string) bool {
	switch op {
	case "append", "delete", "update", "rewrite", "reserve_fragments", "create_index", "update_config", "update_mem_wal_state":
		return true
	}
	return false
}

// columnOnly lists operations that change columns, not rows: harmless to a
// view when its read columns keep their field ids and types.
func columnOnly(op string) bool {
	switch op {
	case "merge", "project":
		return true
	}
	return false
}

// Analyze walks the source versions after from up to to (manifests and
// transactions only) and returns the span's change set for a view whose
// inputs are the top-level source columns roots. A precomputed change set
// pre (nil: none) from from to to is used instead of reading the row
// metadata when the span holds row-level operations only.
func Analyze(ctx context.Context, from, to *lance.Snapshot, roots []string, pre *lance.ChangeSet) (*Span, error) {
	sp := &Span{From: from.Version, To: to.Version}
	if reason := readColumnsChanged(from.Schema, to.Schema, roots); reason != "" {
		sp.Rebuild = reason
		return sp, nil
	}
	// Segments of row-level steps are composed; column-only steps between
	// them are skipped.
	segStart := from
	prev := from
	var acc *lance.ChangeSet
	flush := func(end *lance.Snapshot) error {
		if end.Version <= segStart.Version {
			return nil
		}
		cs, err := lance.Changes(ctx, segStart, end)
		if err != nil {
			return err
		}
		acc = Compose(acc, cs)
		return nil
	}
	for v := from.Version + 1; v <= to.Version; v++ {
		cur := to
		if v != to.Version {
			m, err := to.Table().Checkout(ctx, v)
			if errors.Is(err, lance.ErrVersionNotFound) {
				// Cleaned up: what it did can no longer be read.
				sp.Rebuild = fmt.Sprintf("source version %d no longer exists", v)
				return sp, nil
			}
			if err != nil {
				return nil, err
			}
			cur = m
		}
		sp.Versions++
		kind, err := cur.Operation(ctx)
		if err != nil {
			return nil, err
		}
		op := string(kind)
		switch {
		case rowLevel(op):
		case columnOnly(op):
			if reason := readColumnsChanged(prev.Schema, cur.Schema, roots); reason != "" {
				sp.Rebuild = reason
				return sp, nil
			}
			if err := flush(prev); err != nil {
				return nil, err
			}
			segStart = cur
		default:
			sp.Rebuild = fmt.Sprintf("source version %d is a %s", v, op)
			return sp, nil
		}
		prev = cur
	}
	if pre != nil && pre.From == from.Version && pre.To == to.Version && segStart == from {
		sp.Changes = pre
		return sp, nil
	}
	if err := flush(to); err != nil {
		return nil, err
	}
	if acc == nil {
		acc = &lance.ChangeSet{From: from.Version, To: to.Version, Inserted: roaring64.New(), Updated: roaring64.New(), Deleted: roaring64.New()}
	}
	acc.From, acc.To = from.Version, to.Version
	sp.Changes = acc
	return sp, nil
}

// readColumnsChanged says which read column changed identity or type
// between two schemas ("" when none did). A missing root is reported by
// the caller with LanceDB's message before it gets here.
func readColumnsChanged(a, b *lance.Schema, roots []string) string {
	for _, r := range roots {
		fa, fb := a.FieldByName(r), b.FieldByName(r)
		if fa == nil || fb == nil {
			return fmt.Sprintf("source column '%s' is not in both versions", r)
		}
		if fa.ID != fb.ID || !sameType(fa, fb) {
			return fmt.Sprintf("the type of source column '%s' changed", r)
		}
	}
	return ""
}

func sameType(a, b *lance.Field) bool {
	if a.LogicalType != b.LogicalType || a.Nullable != b.Nullable || len(a.Children) != len(b.Children) {
		return false
	}
	for i := range a.Children {
		if a.Children[i].Name != b.Children[i].Name || !sameType(a.Children[i], b.Children[i]) {
			return false
		}
	}
	return true
}

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
