package lance

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"strconv"
	"sync"
	"time"

	"github.com/mvd-project/mvd/vfs"
)

// seenVersion is the newest version a Table has seen (Version 0: none).
// dirStamp is _versions/'s modification time when the version hint last
// showed no newer version past a gap (see hintBeyond).
type seenVersion struct {
	mu       sync.Mutex
	ref      VersionRef
	dirStamp time.Time
	// listed are the manifests the last listing of the first keys of
	// _versions/ returned (key-ordered stores), at listedAt: their sizes
	// and times stand in for a HEAD of each for listedFresh.
	listed   []fs.FileInfo
	listedAt time.Time
	// own is the manifest of this handle's last commit on a key-ordered
	// store, at ownAt: a checkout of that version within listedFresh
	// (the daemon reads the commit's watermark for the notification
	// right after it) needs no HEAD.
	own   *Manifest
	ownAt time.Time
}

// listedFresh is how long the manifests a listing returned are taken as
// they were listed instead of a HEAD of each. A manifest is written once
// (If-None-Match: *) and only removed by a cleanup or a drop; a HEAD is
// no more than a snapshot either, and its time has a second's precision,
// so within a second the two tell the same: the refresh that lists the
// source's latest version checks out the version its view is at (the
// next key) with no request of its own.
const listedFresh = time.Second

// maxProbe bounds how many versions Latest probes past the one it
// remembers before it lists _versions/ instead.
const maxProbe = 16

// remember records ref as the newest version seen: unconditionally when
// it comes from a listing (the truth, even if older: the table may have
// been recreated), else only if it is newer.
func (t *Table) remember(ref VersionRef, listed bool) {
	t.seen.mu.Lock()
	defer t.seen.mu.Unlock()
	if listed || ref.Version > t.seen.ref.Version || ref.Naming != t.seen.ref.Naming {
		t.seen.ref = ref
	}
}

func (t *Table) remembered() VersionRef {
	t.seen.mu.Lock()
	defer t.seen.mu.Unlock()
	return t.seen.ref
}

// namingOrder is the order in which to try the two manifest naming
// schemes for a known version: the one last seen first.
func (t *Table) namingOrder() [2]ManifestNaming {
	if t.remembered().Naming == NamingV1 {
		return [2]ManifestNaming{NamingV1, NamingV2}
	}
	return [2]ManifestNaming{NamingV2, NamingV1}
}

// rememberListed records the manifests a listing of _versions/ returned.
func (t *Table) rememberListed(objs []fs.FileInfo, at time.Time) {
	t.seen.mu.Lock()
	defer t.seen.mu.Unlock()
	t.seen.listed, t.seen.listedAt = objs, at
}

// rememberOwn records m, just committed by this handle, on a key-ordered
// store.
func (t *Table) rememberOwn(m *Manifest) {
	if _, ok := t.keyOrdered(); !ok {
		return
	}
	t.seen.mu.Lock()
	defer t.seen.mu.Unlock()
	t.seen.own, t.seen.ownAt = m, time.Now()
}

// ownManifest returns the manifest of version v if this handle committed
// it under listedFresh ago.
func (t *Table) ownManifest(v uint64) *Manifest {
	t.seen.mu.Lock()
	defer t.seen.mu.Unlock()
	if t.seen.own == nil || t.seen.own.Version != v {
		return nil
	}
	if age := time.Since(t.seen.ownAt); age < 0 || age >= listedFresh {
		return nil
	}
	return t.seen.own
}

// listedInfo returns ref's manifest as the last listing returned it, if
// that listing is under listedFresh old.
func (t *Table) listedInfo(ref VersionRef) (fs.FileInfo, bool) {
	t.seen.mu.Lock()
	defer t.seen.mu.Unlock()
	if age := time.Since(t.seen.listedAt); age < 0 || age >= listedFresh {
		return nil, false
	}
	for _, o := range t.seen.listed {
		if o.Name() == ref.File {
			return o, true
		}
	}
	return nil, false
}

func (t *Table) statManifest(ref VersionRef) (fs.FileInfo, error) {
	return vfs.StatObject(t.fs, t.path(versionsDir, ref.File)) // a manifest is never a directory
}

func refAt(v uint64, naming ManifestNaming) VersionRef {
	return VersionRef{Version: v, Naming: naming, File: manifestName(v, naming)}
}

// latestRef finds the newest committed version: from the version last
// seen, it probes the following names one by one, so a table that did
// not move costs two stats and one that moved by one version three; it
// lists _versions/ when nothing was seen yet, when the version seen is
// gone (cleaned up or the table recreated) or when it is far behind. On a
// key-ordered store (S3) it lists instead (latestListed).
func (t *Table) latestRef() (VersionRef, fs.FileInfo, error) {
	return t.probeLatest(true)
}

// probeLatest is latestRef; without gapCheck it skips the check for a
// newer version past a gap (hintBeyond), which its caller then makes.
func (t *Table) probeLatest(gapCheck bool) (VersionRef, fs.FileInfo, error) {
	if l, ok := t.keyOrdered(); ok {
		return t.latestListed(l)
	}
	last := t.remembered()
	if last.Version == 0 {
		return t.latestByListing()
	}
	cur := last
	var curInfo fs.FileInfo
	for range maxProbe {
		next := refAt(cur.Version+1, cur.Naming)
		info, err := t.statManifest(next)
		if errors.Is(err, fs.ErrNotExist) {
			break
		}
		if err != nil {
			return VersionRef{}, nil, t.errorf(next.Version, "probe version", "%w", err)
		}
		cur, curInfo = next, info
	}
	if cur.Version == last.Version+maxProbe {
		return t.latestByListing() // far behind: one listing is cheaper
	}
	if gapCheck && t.hintBeyond(cur.Version) {
		// A newer version exists past a gap: a cleanup that kept a tagged
		// version removed the ones after it. Only a listing is sure.
		return t.latestByListing()
	}
	if curInfo == nil {
		// Nothing newer: the version seen must still be there.
		info, err := t.statManifest(cur)
		if errors.Is(err, fs.ErrNotExist) {
			return t.latestByListing()
		}
		if err != nil {
			return VersionRef{}, nil, t.errorf(cur.Version, "probe version", "%w", err)
		}
		curInfo = info
	}
	t.remember(cur, false)
	return cur, curInfo, nil
}

func (t *Table) latestByListing() (VersionRef, fs.FileInfo, error) {
	refs, _, err := t.listManifests()
	if err != nil {
		return VersionRef{}, nil, err
	}
	ref := refs[len(refs)-1]
	info, err := t.statManifest(ref)
	if err != nil {
		return VersionRef{}, nil, t.errorf(ref.Version, "read manifest "+ref.File, "%w", err)
	}
	t.remember(ref, true)
	return ref, info, nil
}

// hintBeyond reports whether the version hint names an existing version
// newer than v. Every lance writer updates the hint after each commit, so
// a probe that stopped at v (v+1 missing) learns from it that versions
// were removed after v and that v is not the latest. The hint is read only
// when _versions/ changed since it last showed nothing: a gap needs
// removals, and a removal changes the directory.
func (t *Table) hintBeyond(v uint64) bool {
	st, err := t.fs.Stat(t.path(versionsDir))
	if err != nil {
		return false
	}
	t.seen.mu.Lock()
	same := !t.seen.dirStamp.IsZero() && st.ModTime().Equal(t.seen.dirStamp)
	t.seen.mu.Unlock()
	if same {
		return false
	}
	h, ok := t.readHint()
	if !ok || h <= v {
		t.setDirStamp(st.ModTime())
		return false
	}
	_, found := t.findVersion(h)
	return found
}

// noteOwnChange records _versions/ as it is after this handle's own
// commit or hint write, so that the change does not cost the next Latest
// a read of the hint.
func (t *Table) noteOwnChange() {
	if _, listed := t.keyOrdered(); listed {
		return // the stamp serves hintBeyond, which listings need not
	}
	if st, err := t.fs.Stat(t.path(versionsDir)); err == nil {
		t.setDirStamp(st.ModTime())
	}
}

func (t *Table) setDirStamp(m time.Time) {
	t.seen.mu.Lock()
	t.seen.dirStamp = m
	t.seen.mu.Unlock()
}

// findVersion returns the manifest of version v, under whichever naming
// scheme it has, if it exists.
func (t *Table) findVersion(v uint64) (VersionRef, bool) {
	for _, naming := range t.namingOrder() {
		ref := refAt(v, naming)
		if info, err := t.statManifest(ref); err == nil && info.Mode().IsRegular() {
			return ref, true
		}
	}
	return VersionRef{}, false
}

// readHint returns the version latest_version_hint.json names, if it
// names one.
func (t *Table) readHint() (uint64, bool) {
	raw, err := vfs.ReadObject(t.objs, t.path(versionsDir, hintFile))
	if err != nil {
		return 0, false
	}
	return parseHint(raw)
}

// parseHint reads the version of a hint file, false if it names none. The
// form Lance and mvd write, {"version":N}, is read directly (CheckHead
// reads the hint in every refresh, and encoding/json took tens of µs);
// anything else goes through encoding/json.
func parseHint(raw []byte) (uint64, bool) {
	const prefix = `{"version":`
	if d, ok := bytes.CutPrefix(raw, []byte(prefix)); ok && len(d) >= 2 && len(d) <= 21 && d[len(d)-1] == '}' && d[0] != '0' {
		if v, err := strconv.ParseUint(string(d[:len(d)-1]), 10, 64); err == nil {
			return v, true
		}
	}
	var h struct {
		Version uint64 `json:"version"`
	}
	if json.Unmarshal(raw, &h) != nil || h.Version == 0 {
		return 0, false
	}
	return h.Version, true
}

// probeHint reads latest_version_hint.json and, if the version it names
// exists, remembers it, so that opening a table with a long history does
// not list it. The hint is only a starting point: Latest probes past it.
func (t *Table) probeHint() bool {
	v, ok := t.readHint()
	if !ok {
		return false
	}
	ref, ok := t.findVersion(v)
	if ok {
		t.remember(ref, true)
	}
	return ok
}

// manifestAt returns the decoded manifest of ref, whose file info is
// info: from the cache when the same file was decoded before.
func (t *Table) manifestAt(ref VersionRef, info fs.FileInfo) (*Manifest, error) {
	if m := t.cache.get(keyOf(ref.File, info)); m != nil {
		return m, nil
	}
	raw, err := t.readManifestFile(ref)
	if err != nil {
		return nil, err
	}
	return t.decodeCached(ref, info, raw)
}
