package matview

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"

	"github.com/mvd-project/mvd/lance"
)

// SourceStateStore keeps, per view, the state of the view's source at the
// view's watermark (lance.VersionState): what the change set from the
// watermark needs of that version, so that a refresh stays incremental
// after the source's owner cleaned the version up (LanceDB's
// cleanupOldVersions). The daemon fills it with its checkpoint store;
// without one (Options.SourceStates nil) a refresh whose watermark
// version is gone rebuilds. Its methods are safe for concurrent use.
type SourceStateStore interface {
	// LoadSourceState returns the state last kept for view (any error:
	// none can be used).
	LoadSourceState(ctx context.Context, view string) ([]byte, error)
	// KeepSourceState hands over the state of view's source at version
	// (committed at commitTS ns since the epoch) after a successful
	// refresh. It must not block: encode makes the state and is called
	// later, off the refresh's path, by the store.
	KeepSourceState(view string, version uint64, commitTS int64, encode func() ([]byte, error))
}

// The kept state's encoding wraps lance's with what ties it to one view
// and one source: the view's incarnation, the source table's name, the
// source version and its commit time, then lance.VersionState's bytes,
// then a CRC-32C of all of it.
const keptMagic = "mvdSRC1\n"

var keptCRC = crc32.MakeTable(crc32.Castagnoli)

// keptHeader is what a kept state is of.
type keptHeader struct {
	incarnation, source string
	version             uint64
	commitTS            int64
}

func encodeKept(h keptHeader, st *lance.VersionState) ([]byte, error) {
	body, err := st.MarshalBinary()
	if err != nil {
		return nil, err
	}
	b := append([]byte(nil), keptMagic...)
	b = binary.AppendUvarint(b, uint64(len(h.incarnation)))
	b = append(b, h.incarnation...)
	b = binary.AppendUvarint(b, uint64(len(h.source)))
	b = append(b, h.source...)
	b = binary.AppendUvarint(b, h.version)
	b = binary.AppendVarint(b, h.commitTS)
	b = append(b, body...)
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, keptCRC)), nil
}

var errKeptDamaged = errors.New("damaged")

func decodeKept(b []byte) (keptHeader, *lance.VersionState, error) {
	var h keptHeader
	if len(b) < len(keptMagic)+4 || !bytes.HasPrefix(b, []byte(keptMagic)) {
		return h, nil, errKeptDamaged
	}
	body := b[:len(b)-4]
	if crc32.Checksum(body, keptCRC) != binary.LittleEndian.Uint32(b[len(b)-4:]) {
		return h, nil, errKeptDamaged
	}
	r := body[len(keptMagic):]
	str := func() string {
		n, k := binary.Uvarint(r)
		if k <= 0 || n > uint64(len(r)-k) {
			r = nil
			return ""
		}
		s := string(r[k : k+int(n)])
		r = r[k+int(n):]
		return s
	}
	h.incarnation, h.source = str(), str()
	v, k := binary.Uvarint(r)
	if r == nil || k <= 0 {
		return h, nil, errKeptDamaged
	}
	h.version, r = v, r[k:]
	ts, k := binary.Varint(r)
	if k <= 0 {
		return h, nil, errKeptDamaged
	}
	h.commitTS = ts
	st, err := lance.DecodeVersionState(r[k:])
	if err != nil {
		return h, nil, fmt.Errorf("%w: %w", errKeptDamaged, err)
	}
	return h, st, nil
}

// KeptSourceVersion says which source version a state kept through a
// SourceStateStore is of: its number and commit time (ns since the
// epoch). A damaged state fails.
func KeptSourceVersion(b []byte) (version uint64, commitTS int64, err error) {
	h, _, err := decodeKept(b)
	if err != nil {
		return 0, 0, errorf(ErrInvalid, err, "kept source state: %v", err)
	}
	return h.version, h.commitTS, nil
}

// keptFacts stands in for the source at the watermark W when that
// version is gone: the state kept of it, if it is of exactly W of this
// view's source, with the change set from it to sm. It returns the facts
// (kept false and keptWhy saying why not when no state can be used) and
// the change set.
func (a *attempt) keptFacts(ctx context.Context) (*watermarkVersion, *lance.ChangeSet) {
	W := a.wm
	store := a.v.db.states
	if store == nil {
		return &watermarkVersion{keptWhy: "no state of it was kept (no state store)"}, nil
	}
	b, err := store.LoadSourceState(ctx, a.v.name)
	if err != nil {
		return &watermarkVersion{keptWhy: "no state of it was kept"}, nil
	}
	h, st, err := decodeKept(b)
	switch {
	case err != nil:
		return &watermarkVersion{keptWhy: fmt.Sprintf("the state kept of it is %v", err)}, nil
	case h.incarnation != a.v.incarnation || h.source != a.def.SourceTable:
		return &watermarkVersion{keptWhy: "the state kept is of another view or source of that name"}, nil
	case h.version != W.SourceVersion || st.Version() != W.SourceVersion:
		return &watermarkVersion{keptWhy: fmt.Sprintf("the state kept is of source version %d", h.version)}, nil
	case h.commitTS != W.SourceVersionTS || st.Timestamp().UnixNano() != W.SourceVersionTS:
		return &watermarkVersion{keptWhy: "the state kept of it is of another incarnation of the source"}, nil
	}
	cs, err := lance.ChangesFromState(ctx, st, a.sm)
	if err != nil {
		return &watermarkVersion{keptWhy: fmt.Sprintf("the state kept of it cannot stand in for it: %v", err)}, nil
	}
	return &watermarkVersion{kept: true, commitTS: W.SourceVersionTS, readColumns: readColumnsChanged(st.Schema(), a.sm.Schema, a.p.Columns())}, cs
}

// keepSourceState hands the state of the source at sm, the version the
// view now reflects, to the state store, to be made and written off the
// refresh's path.
func (v *View) keepSourceState(sourceTable string, sm *lance.Snapshot) {
	store := v.db.states
	if store == nil || sm == nil {
		return
	}
	h := keptHeader{incarnation: v.incarnation, source: sourceTable, version: sm.Version, commitTS: sm.Timestamp.UnixNano()}
	store.KeepSourceState(v.name, h.version, h.commitTS, func() ([]byte, error) {
		st, err := sm.StateSince(context.Background(), v.kept.Load())
		if err != nil {
			return nil, err
		}
		v.kept.Store(st)
		return encodeKept(h, st)
	})
}
