package provenance

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"path"

	"github.com/mvd-project/mvd/vfs"
)

// Dir is where a view keeps its index, inside the view's table directory
// (Lance and LanceDB ignore it; dropping the view removes it).
const Dir = "_mvd"

// FileName is the index file inside Dir.
const FileName = "provenance.idx"

const magic = "MVDPROV1"

// ErrStale means a saved index does not describe the version asked for.
var ErrStale = errors.New("provenance index is stale")

// Save writes the index for the view at root, tagged with its incarnation,
// as a new file renamed over the old one. The index is a cache (the view's
// commit is the truth and Load validates what it reads), so it is not
// synced: a torn or lost file is detected by its checksum and rebuilt.
func (x *Index) Save(fsys vfs.FS, root, incarnation string) error {
	b := make([]byte, 0, 32+len(incarnation)+x.n*3)
	b = append(b, magic...)
	b = binary.LittleEndian.AppendUint64(b, x.Version)
	b = binary.AppendUvarint(b, uint64(len(incarnation)))
	b = append(b, incarnation...)
	b = binary.AppendUvarint(b, uint64(x.Len()))
	var ps, pv uint64
	x.each(func(s, v uint64) {
		b = binary.AppendUvarint(b, s-ps)
		b = binary.AppendVarint(b, int64(v-pv))
		ps, pv = s, v
	})
	b = binary.LittleEndian.AppendUint32(b, crc32.ChecksumIEEE(b))
	dir := path.Join(root, Dir)
	if err := fsys.MkdirAll(dir); err != nil {
		return err
	}
	tmp := path.Join(dir, ".tmp_"+FileName+fmt.Sprintf("_%d", x.Version))
	_ = fsys.Remove(tmp)
	f, err := fsys.Create(tmp)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		_ = fsys.Remove(tmp)
		return err
	}
	if err := f.Close(); err != nil {
		_ = fsys.Remove(tmp)
		return err
	}
	if err := fsys.Rename(tmp, path.Join(dir, FileName)); err != nil {
		_ = fsys.Remove(tmp)
		return err
	}
	return nil
}

// Load reads the saved index of the view at root. It fails (ErrStale or a
// decoding error) unless the file is intact and of this incarnation; the
// caller checks the version it reflects (Index.Version) and catches up.
func Load(fsys vfs.FS, root, incarnation string) (*Index, error) {
	b, err := vfs.ReadFile(fsys, path.Join(root, Dir, FileName))
	if err != nil {
		return nil, err
	}
	if len(b) < len(magic)+12 || string(b[:len(magic)]) != magic {
		return nil, errors.New("provenance index: bad header")
	}
	body, sum := b[:len(b)-4], binary.LittleEndian.Uint32(b[len(b)-4:])
	if crc32.ChecksumIEEE(body) != sum {
		return nil, errors.New("provenance index: checksum mismatch")
	}
	p := body[len(magic):]
	v := binary.LittleEndian.Uint64(p)
	p = p[8:]
	n, k := binary.Uvarint(p)
	if k <= 0 || uint64(len(p)-k) < n {
		return nil, errors.New("provenance index: bad incarnation")
	}
	if string(p[k:k+int(n)]) != incarnation {
		return nil, fmt.Errorf("%w: it belongs to another incarnation of the view", ErrStale)
	}
	p = p[k+int(n):]
	count, k := binary.Uvarint(p)
	if k <= 0 || count > uint64(len(p)) {
		return nil, errors.New("provenance index: bad count")
	}
	p = p[k:]
	var bld Builder
	var ps, pv uint64
	for range count {
		d, k := binary.Uvarint(p)
		if k <= 0 {
			return nil, errors.New("provenance index: truncated")
		}
		p = p[k:]
		e, k2 := binary.Varint(p)
		if k2 <= 0 {
			return nil, errors.New("provenance index: truncated")
		}
		p = p[k2:]
		ps, pv = ps+d, pv+uint64(e)
		bld.Add(ps, pv)
	}
	if len(p) != 0 {
		return nil, errors.New("provenance index: trailing bytes")
	}
	return bld.Index(v)
}
