package matview

import (
	"context"
	"errors"
	"fmt"

	"github.com/RoaringBitmap/roaring/v2/roaring64"

	"github.com/mvd-project/mvd/lance"
)

// The facts of the source's history the decision asks for, and the change
// set of the span it decides on: manifests and transactions only, no row
// is read here.

// watermarkFacts looks up the source at the watermark's version W for a
// view reading the top-level columns roots, at target sm. It returns the
// facts and the snapshot at W (nil when it is gone).
func watermarkFacts(ctx context.Context, src *lance.Table, W uint64, sm *lance.Snapshot, roots []string) (*watermarkVersion, *lance.Snapshot) {
	wmM, err := src.Checkout(ctx, W)
	if err != nil {
		return &watermarkVersion{}, nil
	}
	return &watermarkVersion{found: true, commitTS: wmM.Timestamp.UnixNano(), readColumns: readColumnsChanged(wmM.Schema, sm.Schema, roots)}, wmM
}

// walkSpan reads the source's history after from up to to, one step per
// version, and stops at the first step that decides a rebuild (stepRule).
func walkSpan(ctx context.Context, from, to *lance.Snapshot, roots []string) (*spanFacts, error) {
	sf := &spanFacts{}
	prev := from
	for v := from.Version + 1; v <= to.Version; v++ {
		cur := to
		if v != to.Version {
			m, err := to.Table().Checkout(ctx, v)
			if errors.Is(err, lance.ErrVersionNotFound) {
				sf.steps = append(sf.steps, spanStep{version: v, gone: true})
				return sf, nil
			}
			if err != nil {
				return nil, err
			}
			cur = m
		}
		kind, err := cur.Operation(ctx)
		if err != nil {
			return nil, err
		}
		st := spanStep{version: v, op: string(kind), readColumns: readColumnsChanged(prev.Schema, cur.Schema, roots)}
		sf.steps = append(sf.steps, st)
		if reason, _ := stepRule(st); reason != "" {
			return sf, nil
		}
		prev = cur
	}
	return sf, nil
}

// changesOf is the change set of span cs: the offered one, or the
// composition of its segments' (from from, at W, to to, at T).
func changesOf(ctx context.Context, cs changeSpan, from, to *lance.Snapshot, offered *lance.ChangeSet) (*lance.ChangeSet, error) {
	if cs.offered {
		return offered, nil
	}
	at := func(v uint64) (*lance.Snapshot, error) {
		switch v {
		case from.Version:
			return from, nil
		case to.Version:
			return to, nil
		}
		return to.Table().Checkout(ctx, v)
	}
	var acc *lance.ChangeSet
	for _, seg := range cs.segments {
		a, err := at(seg.from)
		if err != nil {
			return nil, err
		}
		b, err := at(seg.to)
		if err != nil {
			return nil, err
		}
		c, err := lance.Changes(ctx, a, b)
		if err != nil {
			return nil, err
		}
		acc = lance.Compose(acc, c)
	}
	if acc == nil {
		acc = &lance.ChangeSet{Inserted: roaring64.New(), Updated: roaring64.New(), Deleted: roaring64.New()}
	}
	acc.From, acc.To = cs.from, cs.to
	return acc, nil
}

// readColumnsChanged says which read column changed identity or type
// between two schemas ("" when none did). A missing root is reported
// with LanceDB's message before the decision (planFor).
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

// sameType compares logical types and nullability, children included.
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
