package lance

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/mvd-project/mvd/lance/internal/pb/tablepb"
	"github.com/mvd-project/mvd/vfs"
)

const (
	indicesDir = "_indices"
	tagsDir    = "_refs/tags"
)

// CleanupPolicy says which versions CleanupOldVersions keeps: the newest
// KeepLast, every one committed within KeepFor of Now, every version a tag
// (_refs/tags/NAME.json, as LanceDB writes them) names and every version in
// Pinned. Everything older is removed.
type CleanupPolicy struct {
	// KeepFor keeps the versions committed at or after Now-KeepFor.
	KeepFor time.Duration
	// KeepLast keeps at least this many newest versions; values below 1
	// mean 1 (the latest version is never removed).
	KeepLast int
	// Now is the clock's reading; zero means time.Now().
	Now time.Time
	// Pinned are versions kept whatever their age (a reader's checkout).
	// Versions not on disk are ignored.
	Pinned []uint64
	// KeepFrom, if not 0, keeps every version from it on (a reader that
	// walks the versions after one, such as a downstream view's refresh).
	KeepFrom uint64
}

// pins reports whether p keeps version v whatever its age.
func (p CleanupPolicy) pins(v uint64) bool {
	return (p.KeepFrom != 0 && v >= p.KeepFrom) || slices.Contains(p.Pinned, v)
}

// CleanupStats is what one CleanupOldVersions removed and kept.
type CleanupStats struct {
	// VersionsRemoved counts the manifests deleted.
	VersionsRemoved int
	// DataFiles, DeletionFiles, IndexFiles and TransactionFiles count the
	// files deleted of each kind (an index counts each of its files).
	DataFiles, DeletionFiles, IndexFiles, TransactionFiles int
	// BytesRemoved is the size of every file deleted, manifests included.
	BytesRemoved int64
	// VersionsKept counts the versions left on disk; OldestKept is the
	// oldest of them.
	VersionsKept int
	OldestKept   uint64
	// Tagged are the versions tags pin, among those on disk.
	Tagged []uint64
}

// fileSet is the files a set of manifests reference, as paths relative to
// the table root; index directories are listed by their directory.
type fileSet map[string]struct{}

func (s fileSet) add(p string) { s[p] = struct{}{} }

// CleanupOldVersions removes the versions p does not keep, and the data,
// deletion, index and transaction files that only they reference. It never
// removes the latest version nor a file any kept version references, and
// never a file no manifest references (a commit in progress writes its
// files before its manifest).
//
// It is crash-safe by its order: first the files only removed versions
// reference (then their directories are synced), then the manifests,
// oldest first (then _versions/ is synced). A crash at any step leaves
// every kept version readable, because none of its files is touched; the
// manifests of the versions being removed are still there until their
// files are gone, so the next cleanup finds those files again through them
// and finishes the job. Files already gone are skipped.
//
// Only the table's own files are touched: a table's versions never
// reference another table's files. What each manifest references is
// remembered by the Table (keyed by the manifest file's name, size and
// modification time), so a cleanup run again decodes only the manifests
// committed since.
func (t *Table) CleanupOldVersions(ctx context.Context, p CleanupPolicy) (CleanupStats, error) {
	var st CleanupStats
	refs, _, err := t.listManifests()
	if err != nil {
		return st, err
	}
	tags, err := t.tagVersions()
	if err != nil {
		return st, err
	}
	keep, drop, err := t.partitionVersions(ctx, refs, tags, p)
	if err != nil {
		return st, err
	}
	for _, vf := range keep {
		if _, ok := tags[vf.ref.Version]; ok {
			st.Tagged = append(st.Tagged, vf.ref.Version)
		}
	}
	st.VersionsKept, st.OldestKept = len(keep), keep[0].ref.Version
	// The latest version is always kept: remembering it keeps Latest from
	// probing forward from a tagged old version across the gap left here.
	t.remember(refs[len(refs)-1], true)
	t.cleanupMemo.retain(refs)
	if len(drop) == 0 {
		return st, nil
	}
	kept := referencedFiles(keep)
	doomed := referencedFiles(drop)
	for f := range kept {
		delete(doomed, f)
	}
	if err := t.removeFiles(ctx, doomed, &st); err != nil {
		return st, err
	}
	if err := t.removeManifests(ctx, drop, &st); err != nil {
		return st, err
	}
	return st, nil
}

// versionFiles is what one committed version references, for cleanup.
type versionFiles struct {
	ref   VersionRef
	ts    time.Time
	files []string // relative to the table root; index directories whole
}

// cleanupMemo remembers the versionFiles of manifests already decoded.
type cleanupMemo struct {
	mu sync.Mutex
	m  map[manifestKey]versionFiles
}

func (c *cleanupMemo) get(k manifestKey) (versionFiles, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	vf, ok := c.m[k]
	return vf, ok
}

func (c *cleanupMemo) put(k manifestKey, vf versionFiles) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[manifestKey]versionFiles{}
	}
	c.m[k] = vf
}

// retain forgets the manifests not among refs.
func (c *cleanupMemo) retain(refs []VersionRef) {
	names := make(map[string]bool, len(refs))
	for _, r := range refs {
		names[r.File] = true
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for k := range c.m {
		if !names[k.file] {
			delete(c.m, k)
		}
	}
}

// versionFilesOf returns what the manifest of ref references, decoding it
// unless the memo has it.
func (t *Table) versionFilesOf(ref VersionRef, memo *fragmentMemo) (versionFiles, error) {
	info, err := t.statManifest(ref)
	if err != nil {
		return versionFiles{}, t.errorf(ref.Version, "read manifest "+ref.File, "%w", err)
	}
	key := keyOf(ref.File, info)
	if vf, ok := t.cleanupMemo.get(key); ok {
		return vf, nil
	}
	raw, err := t.readManifestFile(ref)
	if err != nil {
		return versionFiles{}, err
	}
	m, err := decodeManifestWith(raw, memo)
	if err != nil {
		return versionFiles{}, t.wrap(ref.Version, "decode manifest "+ref.File, err)
	}
	if m.Version != ref.Version {
		return versionFiles{}, t.versionMismatch(ref, m.Version)
	}
	vf := versionFiles{ref: ref, ts: m.Timestamp, files: manifestFiles(m)}
	if int64(len(raw)) == info.Size() {
		t.cleanupMemo.put(key, vf)
	}
	return vf, nil
}

// tagVersions reads the versions the table's tags pin. A tag that cannot be
// read or parsed fails the cleanup: removing a version a reader pinned is
// worse than keeping old ones a while longer.
func (t *Table) tagVersions() (map[uint64]struct{}, error) {
	out := map[uint64]struct{}{}
	names, err := t.objs.List(t.path(tagsDir))
	if errors.Is(err, fs.ErrNotExist) {
		return out, nil
	}
	if err != nil {
		return nil, t.errorf(0, "list tags", "%w", err)
	}
	for _, name := range names {
		if !strings.HasSuffix(name, ".json") {
			continue
		}
		raw, err := vfs.ReadObject(t.objs, t.path(tagsDir, name))
		if err != nil {
			return nil, t.errorf(0, "read tag "+name, "%w", err)
		}
		var tag struct {
			Version *uint64 `json:"version"`
		}
		if err := json.Unmarshal(raw, &tag); err != nil || tag.Version == nil {
			return nil, t.errorf(0, "read tag "+name, "%w: not a tag (want {\"version\": N, ...})", ErrCorrupt)
		}
		out[*tag.Version] = struct{}{}
	}
	return out, nil
}

// partitionVersions splits the committed versions into those p keeps and
// those it removes, both oldest first; keep is never empty.
func (t *Table) partitionVersions(ctx context.Context, refs []VersionRef, tags map[uint64]struct{}, p CleanupPolicy) (keep, drop []versionFiles, err error) {
	cutoff := p.now().Add(-p.KeepFor)
	last := max(p.KeepLast, 1)
	// Consecutive versions share most fragments byte for byte: decoding
	// them in order through one memo unmarshals each fragment once.
	var memo fragmentMemo
	for i, ref := range refs {
		if err := ctx.Err(); err != nil {
			return nil, nil, t.wrap(0, "cleanup", err)
		}
		vf, err := t.versionFilesOf(ref, &memo)
		if err != nil {
			return nil, nil, err
		}
		_, tagged := tags[ref.Version]
		if tagged || i >= len(refs)-last || !vf.ts.Before(cutoff) || p.pins(ref.Version) {
			keep = append(keep, vf)
		} else {
			drop = append(drop, vf)
		}
	}
	return keep, drop, nil
}

// referencedFiles returns the files the versions reference.
func referencedFiles(vs []versionFiles) fileSet {
	s := fileSet{}
	for _, vf := range vs {
		for _, f := range vf.files {
			s.add(f)
		}
	}
	return s
}

// manifestFiles returns the files a manifest references: data files,
// deletion files, index directories and its transaction file.
func manifestFiles(m *Manifest) []string {
	var out []string
	for _, f := range m.Fragments {
		for _, df := range f.Files {
			out = append(out, path.Join(dataDir, df.Path))
		}
		if f.Deletion != nil {
			out = append(out, path.Join(deletionsDir, f.Deletion.fileName(f.ID)))
		}
	}
	out = append(out, indexDirs(m)...)
	if m.TransactionFile != "" {
		out = append(out, path.Join(transactionsDir, m.TransactionFile))
	}
	return out
}

// indexDirs returns the _indices/UUID directories of a manifest's indices.
// An index section that does not decode names none: its manifest was read
// by checkout too, which validates the framing only.
func indexDirs(m *Manifest) []string {
	if m.pb == nil || m.pb.IndexSection == nil {
		return nil
	}
	sec, err := lengthPrefixed(m.raw, m.pb.GetIndexSection())
	if err != nil {
		return nil
	}
	var is tablepb.IndexSection
	if proto.Unmarshal(sec, &is) != nil {
		return nil
	}
	var dirs []string
	for _, ix := range is.GetIndices() {
		if u := ix.GetUuid().GetUuid(); len(u) == 16 {
			dirs = append(dirs, path.Join(indicesDir, formatUUID(u)))
		}
	}
	return dirs
}

// formatUUID prints 16 bytes as Lance names index directories.
func formatUUID(u []byte) string {
	h := hex.EncodeToString(u)
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// removeFiles deletes the files (and index directories) in doomed, then
// syncs the directories it deleted from, so that no manifest is removed
// before the removals of the files it references are durable.
func (t *Table) removeFiles(ctx context.Context, doomed fileSet, st *CleanupStats) error {
	names := make([]string, 0, len(doomed))
	for f := range doomed {
		names = append(names, f)
	}
	slices.Sort(names)
	dirs := map[string]struct{}{}
	for _, name := range names {
		if err := ctx.Err(); err != nil {
			return t.wrap(0, "cleanup", err)
		}
		if strings.HasPrefix(name, indicesDir+"/") {
			if err := t.removeIndexDir(name, st); err != nil {
				return err
			}
			dirs[indicesDir] = struct{}{}
			continue
		}
		removed, err := t.removeFile(name, st)
		if err != nil {
			return err
		}
		if !removed {
			continue
		}
		dirs[path.Dir(name)] = struct{}{}
		switch strings.SplitN(name, "/", 2)[0] {
		case dataDir:
			st.DataFiles++
		case deletionsDir:
			st.DeletionFiles++
		case transactionsDir:
			st.TransactionFiles++
		}
	}
	return t.syncDirs(dirs)
}

// removeFile deletes one file of the table, counting its bytes; a file
// already gone (a crashed cleanup removed it) is not an error.
func (t *Table) removeFile(name string, st *CleanupStats) (bool, error) {
	full := t.path(name)
	info, err := t.fs.Stat(full)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, t.errorf(0, "cleanup: stat "+name, "%w", err)
	}
	if err := t.objs.Delete(full); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
		return false, t.errorf(0, "cleanup: remove "+name, "%w", err)
	}
	st.BytesRemoved += info.Size()
	return true, nil
}

// removeIndexDir deletes the files of one index directory, then the
// directory.
func (t *Table) removeIndexDir(dir string, st *CleanupStats) error {
	files, err := t.objs.List(t.path(dir))
	if errors.Is(err, fs.ErrNotExist) {
		files = nil
	} else if err != nil {
		return t.errorf(0, "cleanup: list "+dir, "%w", err)
	}
	slices.Sort(files)
	for _, f := range files {
		removed, err := t.removeFile(path.Join(dir, f), st)
		if err != nil {
			return err
		}
		if removed {
			st.IndexFiles++
		}
	}
	if err := t.fs.SyncDir(t.path(dir)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return t.errorf(0, "cleanup: sync "+dir, "%w", err)
	}
	if err := t.fs.Remove(t.path(dir)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return t.errorf(0, "cleanup: remove "+dir, "%w", err)
	}
	return nil
}

func (t *Table) syncDirs(dirs map[string]struct{}) error {
	names := make([]string, 0, len(dirs))
	for d := range dirs {
		names = append(names, d)
	}
	slices.Sort(names)
	for _, d := range names {
		if err := t.fs.SyncDir(t.path(d)); err != nil {
			return t.errorf(0, "cleanup: sync "+d, "%w", err)
		}
	}
	return nil
}

// removeManifests deletes the manifests of drop, oldest first, then syncs
// _versions/.
func (t *Table) removeManifests(ctx context.Context, drop []versionFiles, st *CleanupStats) error {
	for _, vf := range drop {
		if err := ctx.Err(); err != nil {
			return t.wrap(0, "cleanup", err)
		}
		removed, err := t.removeFile(path.Join(versionsDir, vf.ref.File), st)
		if err != nil {
			return err
		}
		if removed {
			st.VersionsRemoved++
		}
	}
	if err := t.fs.SyncDir(t.path(versionsDir)); err != nil {
		return t.errorf(0, "cleanup: sync "+versionsDir, "%w", err)
	}
	return nil
}

// String summarizes the stats for logs.
func (s CleanupStats) String() string {
	return fmt.Sprintf("%d versions removed (%d kept from %d), %d data, %d deletion, %d index, %d transaction files, %d bytes",
		s.VersionsRemoved, s.VersionsKept, s.OldestKept, s.DataFiles, s.DeletionFiles, s.IndexFiles, s.TransactionFiles, s.BytesRemoved)
}

// CleanupDue reports whether CleanupOldVersions under p would remove a
// version now (NextCleanup is due by p.Now).
func (t *Table) CleanupDue(ctx context.Context, p CleanupPolicy) (bool, error) {
	next, err := t.NextCleanup(ctx, p)
	return !next.IsZero() && next.Before(p.now()), err
}

// NextCleanup returns when CleanupOldVersions under p will first remove a
// version of those on disk now (at or before p.Now: it would now), or the
// zero time if it never will (none beyond the newest KeepLast that is not
// tagged or pinned). It is cheap: a listing of _versions/ and the tags,
// and one manifest read, that of the oldest version the count alone would
// let go, since versions are committed in time order.
func (t *Table) NextCleanup(ctx context.Context, p CleanupPolicy) (time.Time, error) {
	if err := ctx.Err(); err != nil {
		return time.Time{}, t.wrap(0, "cleanup", err)
	}
	refs, _, err := t.listManifests()
	if err != nil {
		return time.Time{}, err
	}
	tags, err := t.tagVersions()
	if err != nil {
		return time.Time{}, err
	}
	for _, ref := range refs[:max(len(refs)-max(p.KeepLast, 1), 0)] {
		if _, tagged := tags[ref.Version]; tagged || p.pins(ref.Version) {
			continue
		}
		vf, err := t.versionFilesOf(ref, nil)
		if err != nil {
			return time.Time{}, err
		}
		return vf.ts.Add(p.KeepFor), nil
	}
	return time.Time{}, nil
}

func (p CleanupPolicy) now() time.Time {
	if p.Now.IsZero() {
		return time.Now()
	}
	return p.Now
}
