package lance

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"runtime"
	"slices"

	"github.com/mvd-project/mvd/vfs"
)

// Table is a Lance table directory; it is safe for concurrent use.
//
// It remembers the newest version it has seen and keeps a few decoded
// manifests, and checks both against the disk on every use: Latest
// probes the versions after the remembered one by name (versions are
// contiguous above the oldest one kept) and lists _versions/ only when the
// remembered version is gone (cleaned up, or the table was recreated); a
// cached manifest is used only while its file has the same name, size and
// modification time. So a Table always sees the versions committed on
// disk, by any writer, and a long-lived Table makes reading them cheap.
type Table struct {
	fs   vfs.FS
	objs vfs.ObjectStore // fs as an object store: what the commit path uses
	root string

	seen  seenVersion
	cache manifestCache
	frags fragmentMemo // the fragments of the last manifest decoded
	hints hintWriter   // DeferHint commits' hints and DeferSync commits' name syncs, in the background
	spare *spareStage  // for the next prepared commit
	next  nextCommit   // the next commit built ahead (Commit.Next)
	dels  deletionCache
	rids  rowIDCache // decoded row-id sequences, by fragment message
	// cleanupMemo remembers what each manifest references, for cleanup.
	cleanupMemo cleanupMemo
}

// Open returns the table rooted at root. It fails with ErrNotATable unless
// root is a directory with a _versions/ directory holding at least one
// committed manifest.
func Open(ctx context.Context, fsys vfs.FS, root string) (*Table, error) {
	t := newTable(fsys, root)
	if err := ctx.Err(); err != nil {
		return nil, t.wrap(0, "open table", err)
	}
	if l, ok := t.keyOrdered(); ok {
		// One listing finds the latest version, and that root is a table.
		if _, _, err := t.latestListed(l); err != nil {
			return nil, err
		}
		return t, nil
	}
	st, err := fsys.Stat(root)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, t.errorf(0, "open table", "%w: %s does not exist", ErrNotATable, root)
		}
		return nil, t.errorf(0, "open table", "%w", err)
	}
	if !st.IsDir() {
		return nil, t.errorf(0, "open table", "%w: %s is not a directory", ErrNotATable, root)
	}
	if t.probeHint() {
		return t, nil
	}
	refs, _, err := t.listManifests()
	if err != nil {
		return nil, err
	}
	t.remember(refs[len(refs)-1], true)
	return t, nil
}

func newTable(fsys vfs.FS, root string) *Table {
	t := &Table{fs: fsys, objs: vfs.Objects(fsys), root: root, spare: &spareStage{}}
	// A spare staging file is an open descriptor: close it with the Table.
	runtime.AddCleanup(t, (*spareStage).discard, t.spare)
	return t
}

// Root returns the table's root directory.
func (t *Table) Root() string { return t.root }

// FS returns the filesystem the table is read through.
func (t *Table) FS() vfs.FS { return t.fs }

func (t *Table) path(elem ...string) string {
	return path.Join(append([]string{t.root}, elem...)...)
}

func (t *Table) errorf(version uint64, op, format string, args ...any) error {
	return &Error{Table: t.root, Version: version, Op: op, Err: fmt.Errorf(format, args...)}
}

func (t *Table) wrap(version uint64, op string, err error) error {
	if err == nil {
		return nil
	}
	var le *Error
	if errors.As(err, &le) {
		return err
	}
	return &Error{Table: t.root, Version: version, Op: op, Err: err}
}

// VersionRef is one committed version as named in _versions/.
type VersionRef struct {
	Version uint64
	Naming  ManifestNaming
	File    string // file name inside _versions/
}

// listManifests lists the committed versions, oldest first. Names that are
// not committed manifests are skipped; a directory mixing V1 and V2 names is
// refused, as Lance itself does.
func (t *Table) listManifests() ([]VersionRef, ManifestNaming, error) {
	names, err := t.objs.List(t.path(versionsDir))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, NamingUnknown, t.errorf(0, "list versions", "%w: no %s directory", ErrNotATable, versionsDir)
		}
		return nil, NamingUnknown, t.errorf(0, "list versions", "%w", err)
	}
	refs := make([]VersionRef, 0, len(names))
	naming := NamingUnknown
	for _, name := range names {
		v, n, ok := parseManifestName(name)
		if !ok {
			continue
		}
		if naming != NamingUnknown && n != naming {
			return nil, NamingUnknown, t.errorf(0, "list versions", "%w: %s mixes V1 and V2 manifest names (%s)", ErrCorrupt, versionsDir, name)
		}
		naming = n
		refs = append(refs, VersionRef{Version: v, Naming: n, File: name})
	}
	if len(refs) == 0 {
		return nil, NamingUnknown, t.errorf(0, "list versions", "%w: no manifest in %s", ErrNotATable, versionsDir)
	}
	slices.SortFunc(refs, func(a, b VersionRef) int { return cmp.Compare(a.Version, b.Version) })
	return refs, naming, nil
}

// Versions lists the committed versions of the table, oldest first. The
// latest_version_hint.json file is never trusted: the directory is listed.
func (t *Table) Versions(ctx context.Context) ([]VersionRef, error) {
	if err := ctx.Err(); err != nil {
		return nil, t.wrap(0, "list versions", err)
	}
	refs, _, err := t.listManifests()
	if err == nil {
		t.remember(refs[len(refs)-1], true)
	}
	return refs, err
}

// Naming returns the manifest naming scheme of the table.
func (t *Table) Naming(ctx context.Context) (ManifestNaming, error) {
	if err := ctx.Err(); err != nil {
		return NamingUnknown, t.wrap(0, "list versions", err)
	}
	ref, _, err := t.latestRef()
	return ref.Naming, err
}

// LatestVersion returns the newest committed version.
func (t *Table) LatestVersion(ctx context.Context) (uint64, error) {
	if err := ctx.Err(); err != nil {
		return 0, t.wrap(0, "list versions", err)
	}
	ref, _, err := t.latestRef()
	return ref.Version, err
}

// Checkout returns the snapshot of version v; v == 0 means the latest.
func (t *Table) Checkout(ctx context.Context, v uint64) (*Snapshot, error) {
	if err := ctx.Err(); err != nil {
		return nil, t.wrap(v, "read manifest", err)
	}
	m, err := t.checkoutManifest(v)
	if err != nil {
		return nil, err
	}
	return &Snapshot{Manifest: m, table: t}, nil
}

// Latest returns the snapshot of the newest committed version.
func (t *Table) Latest(ctx context.Context) (*Snapshot, error) { return t.Checkout(ctx, 0) }

// checkoutManifest loads the manifest of version v; v == 0 means the latest.
func (t *Table) checkoutManifest(v uint64) (*Manifest, error) {
	if v == 0 {
		ref, info, err := t.latestRef()
		if err != nil {
			return nil, err
		}
		return t.manifestAt(ref, info)
	}
	if m := t.ownManifest(v); m != nil {
		return m, nil
	}
	// A known version's file name is derived, not searched for: a table
	// never mixes naming schemes, so at most one of the two names exists
	// and no listing of _versions/ is needed on this path. The scheme last
	// seen is tried first.
	for _, naming := range t.namingOrder() {
		ref := VersionRef{Version: v, Naming: naming, File: manifestName(v, naming)}
		if info, ok := t.listedInfo(ref); ok {
			return t.manifestAt(ref, info)
		}
		info, err := t.statManifest(ref)
		if err == nil {
			return t.manifestAt(ref, info)
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, t.wrap(v, "read manifest "+ref.File, err)
		}
	}
	refs, _, err := t.listManifests() // for the error: not a table, or which versions exist
	if err != nil {
		return nil, err
	}
	return nil, t.errorf(v, "read manifest", "%w: %s", ErrVersionNotFound, versionNotFound(v, refs))
}
