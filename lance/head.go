package lance

import (
	"context"
	"io/fs"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
)

// Head is the newest version of a table as its manifest file shows it
// before it is decoded: the version's number and timestamp. Reading them
// costs a read of the file and a walk of its top-level protobuf fields;
// decoding the manifest (its fragments, its schema), several times more
// on a refresh's critical path, is left to CheckoutHead. A caller that
// can start work knowing only those two (a refresh that stages its
// watermark commit) starts it on the Head and checks the Head out while
// that work runs.
//
// A Head is immutable and safe for concurrent use.
type Head struct {
	// Version is the version's number.
	Version uint64
	// Timestamp is the manifest's timestamp (zero if it has none), as the
	// decoded manifest's Timestamp.
	Timestamp time.Time

	ref  VersionRef
	info fs.FileInfo
	raw  []byte    // the manifest file read (nil when m is set)
	m    *Manifest // the manifest, when it was already decoded
}

// Head returns the newest committed version's number and timestamp,
// reading its manifest but not decoding it. It finds the version as
// Latest does, except that it leaves to CheckoutHead the check for a
// newer version past a gap a cleanup left (reading the version hint):
// Head is on the path to a refresh's first sync, the check is not.
func (t *Table) Head(ctx context.Context) (*Head, error) {
	if err := ctx.Err(); err != nil {
		return nil, t.wrap(0, "read manifest", err)
	}
	ref, info, err := t.probeLatest(false)
	if err != nil {
		return nil, err
	}
	if m := t.cache.get(keyOf(ref.File, info)); m != nil {
		return &Head{Version: m.Version, Timestamp: m.Timestamp, ref: ref, info: info, m: m}, nil
	}
	raw, err := t.readManifestFile(ref)
	if err != nil {
		return nil, err
	}
	section, err := manifestSection(raw)
	if err != nil {
		return nil, t.wrap(ref.Version, "decode manifest "+ref.File, err)
	}
	v, ts, err := headerFields(section)
	if err != nil {
		return nil, t.wrap(ref.Version, "decode manifest "+ref.File, err)
	}
	if v != ref.Version {
		return nil, t.versionMismatch(ref, v)
	}
	return &Head{Version: v, Timestamp: ts, ref: ref, info: info, raw: raw}, nil
}

// CheckoutHead returns the snapshot of the version h names, decoding the
// manifest h read (the same file: no second read, and no newer version
// even if one was committed since). It fails with ErrStaleHead if a newer
// version existed past a gap when h was read (Latest returns it). h must
// come from t.Head. It is CheckHead, then DecodeHead.
func (t *Table) CheckoutHead(ctx context.Context, h *Head) (*Snapshot, error) {
	if err := t.CheckHead(ctx, h); err != nil {
		return nil, err
	}
	return t.DecodeHead(ctx, h)
}

// DecodeHead is CheckoutHead without CheckHead: the snapshot of the
// version h names, whether or not a newer version exists past a gap. A
// caller that can check later, off its critical path (the check reads the
// version hint), calls CheckHead before it acts on the snapshot.
func (t *Table) DecodeHead(ctx context.Context, h *Head) (*Snapshot, error) {
	if err := ctx.Err(); err != nil {
		return nil, t.wrap(h.Version, "read manifest", err)
	}
	if h.m != nil {
		return &Snapshot{Manifest: h.m, table: t}, nil
	}
	m, err := t.decodeCached(h.ref, h.info, h.raw)
	if err != nil {
		return nil, err
	}
	return &Snapshot{Manifest: m, table: t}, nil
}

// CheckHead fails with ErrStaleHead if h is not the latest version because
// a newer one exists past a gap (a cleanup removed the versions after a
// kept one): a probe from h never finds it, so a caller that keeps
// reading heads would never move past h. A version committed right after
// h (h.Version+1 exists) is a race, not a gap: h stays a version the
// caller may reflect.
func (t *Table) CheckHead(ctx context.Context, h *Head) error {
	if err := ctx.Err(); err != nil {
		return t.wrap(h.Version, "check out head", err)
	}
	if _, listed := t.keyOrdered(); listed {
		return nil // a listing found h: it sees past any gap
	}
	if t.hintBeyond(h.Version) {
		if _, next := t.findVersion(h.Version + 1); !next {
			return t.errorf(h.Version, "check out head", "%w", ErrStaleHead)
		}
	}
	return nil
}

// Manifest protobuf fields read by headerFields.
const (
	manifestVersionField   = 3
	manifestTimestampField = 7
)

// headerFields returns the version and the timestamp of a Manifest
// protobuf with proto.Unmarshal's meaning (the last occurrence of a scalar
// wins; occurrences of the timestamp message merge), skipping every other
// field undecoded.
func headerFields(section []byte) (uint64, time.Time, error) {
	var (
		version uint64
		hasTS   bool
		sec     int64
		nanos   int32
	)
	for b := section; len(b) > 0; {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return 0, time.Time{}, corruptf("manifest protobuf: %v", protowire.ParseError(n))
		}
		b = b[n:]
		switch {
		case num == manifestVersionField && typ == protowire.VarintType:
			v, n := protowire.ConsumeVarint(b)
			if n < 0 {
				return 0, time.Time{}, corruptf("manifest protobuf: version: %v", protowire.ParseError(n))
			}
			version, b = v, b[n:]
		case num == manifestTimestampField && typ == protowire.BytesType:
			msg, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return 0, time.Time{}, corruptf("manifest protobuf: timestamp: %v", protowire.ParseError(n))
			}
			// Occurrences merge, as proto.Unmarshal merges them.
			if err := timestampFields(msg, &sec, &nanos); err != nil {
				return 0, time.Time{}, corruptf("manifest protobuf: timestamp: %v", err)
			}
			hasTS, b = true, b[n:]
		default:
			n := protowire.ConsumeFieldValue(num, typ, b)
			if n < 0 {
				return 0, time.Time{}, corruptf("manifest protobuf: field %d: %v", num, protowire.ParseError(n))
			}
			b = b[n:]
		}
	}
	if !hasTS {
		return version, time.Time{}, nil
	}
	// As timestamppb's AsTime.
	return version, time.Unix(sec, int64(nanos)).UTC(), nil
}

// timestampFields reads a google.protobuf.Timestamp message into sec and
// nanos with proto.Unmarshal's meaning (the last occurrence of a field
// wins; fields of another wire type are unknown fields, skipped). It walks
// the few bytes by hand: the reflection-driven unmarshal costs more than
// the rest of a Head on a refresh's critical path.
func timestampFields(msg []byte, sec *int64, nanos *int32) error {
	for b := msg; len(b) > 0; {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		if typ == protowire.VarintType && (num == 1 || num == 2) {
			v, n := protowire.ConsumeVarint(b)
			if n < 0 {
				return protowire.ParseError(n)
			}
			if num == 1 {
				*sec = int64(v)
			} else {
				*nanos = int32(v)
			}
			b = b[n:]
			continue
		}
		n = protowire.ConsumeFieldValue(num, typ, b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
	}
	return nil
}
