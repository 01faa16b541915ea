package lance

import (
	"context"
	"io/fs"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"
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
// come from t.Head.
func (t *Table) CheckoutHead(ctx context.Context, h *Head) (*Snapshot, error) {
	if err := ctx.Err(); err != nil {
		return nil, t.wrap(h.Version, "read manifest", err)
	}
	if t.hintBeyond(h.Version) {
		// A newer version: committed since the Head (then h.Version+1
		// exists), or past a gap.
		if _, next := t.findVersion(h.Version + 1); !next {
			return nil, t.errorf(h.Version, "check out head", "%w", ErrStaleHead)
		}
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
		ts      *timestamppb.Timestamp
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
			if ts == nil {
				ts = &timestamppb.Timestamp{}
			}
			if err := (proto.UnmarshalOptions{Merge: true}).Unmarshal(msg, ts); err != nil {
				return 0, time.Time{}, corruptf("manifest protobuf: timestamp: %v", err)
			}
			b = b[n:]
		default:
			n := protowire.ConsumeFieldValue(num, typ, b)
			if n < 0 {
				return 0, time.Time{}, corruptf("manifest protobuf: field %d: %v", num, protowire.ParseError(n))
			}
			b = b[n:]
		}
	}
	if ts == nil {
		return version, time.Time{}, nil
	}
	return version, ts.AsTime(), nil
}
