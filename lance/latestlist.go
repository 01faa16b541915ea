package lance

import (
	"errors"
	"io/fs"
	"time"

	"github.com/mvd-project/mvd/vfs"
)

// firstKeys is how many keys the listing that finds the latest version on
// an object store asks for: the newest V2 manifest is the first key under
// _versions/ (digits sort before the version hint's and detached
// versions' names); the next few are the versions just before it, which
// a refresh checks out next (its view's source version) without a HEAD
// (listedInfo). A stray object sorting before them costs a whole
// listing, not a wrong answer.
const firstKeys = 8

// keyOrdered returns the table's store when it lists keys in order (S3):
// there the latest version is found by a listing, not by probing names.
func (t *Table) keyOrdered() (vfs.FirstLister, bool) {
	l, ok := t.objs.(vfs.FirstLister)
	return l, ok
}

// latestListed finds the newest committed version on a key-ordered store.
// V2 manifest names sort the newest version first, so one LIST request
// of _versions/ names it, with the size and modification time a HEAD
// would give: no request per version, and no version hint to trust, so
// no gap a cleanup left can hide a newer version. A table with V1 names
// (or whose first keys are no manifest) is listed whole.
func (t *Table) latestListed(l vfs.FirstLister) (VersionRef, fs.FileInfo, error) {
	if t.remembered().Naming != NamingV1 {
		at := time.Now()
		objs, _, err := l.ListFirst(t.path(versionsDir), firstKeys)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return VersionRef{}, nil, t.errorf(0, "list versions", "%w", err)
		}
		t.rememberListed(objs, at)
		for _, o := range objs {
			v, naming, ok := parseManifestName(o.Name())
			if !ok {
				continue
			}
			if naming == NamingV2 {
				ref := VersionRef{Version: v, Naming: naming, File: o.Name()}
				t.remember(ref, true)
				return ref, o, nil
			}
			break // V1 names: their order is not the versions'
		}
	}
	return t.latestByListing()
}
