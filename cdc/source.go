package cdc

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"path"
	"strconv"

	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/vfs"
)

// source is the watcher's only contact with package lance: every call
// into it is here, so a change of the lance API touches one small file.
// The methods take a context for the lance API that takes one on every
// I/O call.
// snapshot is one loaded version of a table.
type snapshot = lance.Snapshot

type source struct {
	fs     vfs.FS
	root   string
	t      *lance.Table
	naming lance.ManifestNaming
	// follow, set when the handles are shared (Options.OpenTable), asks
	// for the table's handle again before each new version is read: its
	// owner may have replaced the one t holds (matview does after a
	// failed read), and a version is decoded once only through the
	// handle the others read.
	follow func(ctx context.Context, root string) (*lance.Table, error)
}

// openSource opens the table at root through Options.OpenTable. It fails
// (isMissing reports true) while root is not yet, or no longer, a table
// with a published manifest.
func (w *Watcher) openSource(ctx context.Context, root string) (*source, error) {
	t, err := w.opts.OpenTable(ctx, root)
	if err != nil {
		return nil, err
	}
	naming, err := t.Naming(ctx)
	if err != nil {
		return nil, err
	}
	s := &source{fs: w.fs, root: root, t: t, naming: naming}
	if w.shared {
		s.follow = w.opts.OpenTable
	}
	return s, nil
}

// probe loads version v if it is published. Unlike checkout, a version
// that does not exist costs one open (one HEAD on S3), not a listing of
// _versions/: it is the hot path of every wake-up.
func (s *source) probe(ctx context.Context, v uint64) (*snapshot, error) {
	ok, err := s.published(v)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("%s version %d: %w", s.root, v, lance.ErrVersionNotFound)
	}
	if s.follow != nil {
		// The same root only: snapshots of one table are compared
		// (lance.Changes), and an opener's fallback may spell it
		// otherwise. On an error the handle held stays as good.
		if t, err := s.follow(ctx, s.root); err == nil && t.Root() == s.t.Root() {
			s.t = t
		}
	}
	return s.t.Checkout(ctx, v)
}

// published reports whether version v's manifest exists, with one
// request on an object store (an open is one HEAD; a stat of a missing
// object would also list, to tell a directory).
func (s *source) published(v uint64) (bool, error) {
	f, err := s.fs.Open(path.Join(s.root, "_versions", manifestName(v, s.naming)))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
		return false, err
	}
	return true, f.Close()
}

// manifestName is the file name of version v under a naming scheme, as
// the Lance format defines it.
func manifestName(v uint64, naming lance.ManifestNaming) string {
	if naming == lance.NamingV2 {
		return fmt.Sprintf("%020d.manifest", uint64(math.MaxUint64)-v)
	}
	return strconv.FormatUint(v, 10) + ".manifest"
}

// checkout loads the published manifest of version v.
func (s *source) checkout(ctx context.Context, v uint64) (*snapshot, error) {
	return s.t.Checkout(ctx, v)
}

// versions lists the published versions, oldest first.
func (s *source) versions(ctx context.Context) ([]uint64, error) {
	refs, err := s.t.Versions(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]uint64, len(refs))
	for i, r := range refs {
		out[i] = r.Version
	}
	return out, nil
}

// changes computes the row-id change set between two loaded manifests.
func (s *source) changes(ctx context.Context, a, b *snapshot) (*lance.ChangeSet, error) {
	return lance.Changes(ctx, a, b)
}

// operation names the Lance operation that produced m, or "".
func (s *source) operation(ctx context.Context, m *snapshot) string {
	tx, err := m.Transaction(ctx)
	if err != nil || tx == nil {
		return ""
	}
	return string(tx.Operation)
}

// manifestPath is where m's file lives.
func (s *source) manifestPath(m *snapshot) string {
	return path.Join(s.root, "_versions", m.File)
}

// newFiles lists the files m added to the table: its manifest and its
// transaction file (meta), and the data files of the fragments appended
// since prev with the bytes they hold (math.MaxUint64 when the manifest
// does not record a file's size). Appended fragments come last, with ids
// above any prev used, so they are found from the end; fragments an
// overwrite or a compaction wrote are not looked for, nor any when prev
// is nil or does not record its highest fragment id.
func (s *source) newFiles(prev, m *snapshot) (meta, data []string, dataBytes uint64) {
	meta = []string{s.manifestPath(m)}
	if m.TransactionFile != "" {
		meta = append(meta, path.Join(s.root, "_transactions", m.TransactionFile))
	}
	if prev == nil || (!prev.HasMaxFragmentID && len(prev.Fragments) > 0) {
		return meta, nil, 0 // no highest id to tell the new ones by
	}
	for i := len(m.Fragments) - 1; i >= 0; i-- {
		// A version that never had a fragment records no highest id.
		if prev.HasMaxFragmentID && m.Fragments[i].ID <= uint64(prev.MaxFragmentID) {
			break
		}
		for _, df := range m.Fragments[i].Files {
			data = append(data, path.Join(s.root, "data", df.Path))
			// Saturating: an unrecorded size (0) counts as too big.
			if n := df.SizeBytes; n == 0 || n > math.MaxUint64-dataBytes {
				dataBytes = math.MaxUint64
			} else {
				dataBytes += n
			}
		}
	}
	return meta, data, dataBytes
}

// versionsDir is the directory whose entries are the table's manifests.
func versionsDir(root string) string { return path.Join(root, "_versions") }

// isMissing reports whether err means the thing looked for is not there
// (no such version, no such table), as opposed to unreadable.
func isMissing(err error) bool {
	return errors.Is(err, lance.ErrVersionNotFound) || errors.Is(err, lance.ErrNotATable) || errors.Is(err, fs.ErrNotExist)
}

// fingerprint identifies the columns of a version's schema: field ids,
// parents, names, types and nullability, not metadata (which a view's
// every refresh changes). Equal fingerprints mean the same columns.
func fingerprint(m *snapshot) string {
	if m == nil || m.Schema == nil {
		return ""
	}
	h := sha256.New()
	var walk func(fs []*lance.Field)
	walk = func(fs []*lance.Field) {
		for _, f := range fs {
			fmt.Fprintf(h, "%d/%d/%q/%q/%t;", f.ID, f.ParentID, f.Name, f.LogicalType, f.Nullable)
			walk(f.Children)
		}
	}
	walk(m.Schema.Fields)
	return hex.EncodeToString(h.Sum(nil)[:16])
}
