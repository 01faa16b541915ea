package lance

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/mvd-project/mvd/lance/internal/format"
	"github.com/mvd-project/mvd/lance/internal/pb/tablepb"
	"github.com/mvd-project/mvd/vfs"
)

const defaultMaxRetries = 20

// hintFile is Lance's best-effort pointer to the latest version.
const hintFile = "latest_version_hint.json"

// Commit publishes one new version of the table with the changes c
// describes, planned against the snapshot base, and returns the snapshot
// of the new version.
//
// A commit is three phases, so that its syncs cost about two journal
// commits instead of one each: (1) write every new file of the version —
// deletion files, the transaction file (both uniquely named, so written
// in place: nothing reads them before a manifest references them) and
// the manifest's staging file — without syncing; (2) sync all of them,
// their directories and the caller's unsynced data files (c.Pending)
// concurrently (vfs.SyncBatch); (3) publish the manifest with
// put-if-not-exists (the commit point) and sync _versions/. The manifest
// is never visible before everything it references is durable; a failed
// sync fails the commit and is never retried. The version hint is written
// after the publish, best effort. Data files of c.Fragments must be
// durable already or be in c.Pending.
//
// If another writer published base.Version+1 first, c.Rebase decides.
// RebaseCompatible (the default) reads every transaction committed since
// base: when they are compatible it rebuilds the version on top of the
// newest one and tries again; when not, it returns an error wrapping
// ErrConflict (a *ConflictError naming the version that won). RebaseNever
// returns that error on any concurrent commit. Nothing is ever overwritten
// or edited in place.
//
// ctx is checked before each attempt; once a manifest is published the
// commit completes regardless.
func (t *Table) Commit(ctx context.Context, base *Snapshot, c *Commit) (*Snapshot, error) {
	if c != nil {
		defer c.Pending.Abort() // unless the first attempt synced it
	}
	naming, err := t.checkCommit(ctx, base, c, "commit")
	if err != nil {
		return nil, err
	}
	retries := c.MaxRetries
	if retries <= 0 {
		retries = defaultMaxRetries
	}
	readVersion := base.Version
	cur := base.Manifest
	for attempt := 0; ; attempt++ {
		batch := c.Pending
		if attempt > 0 || batch == nil {
			batch = vfs.NewSyncBatch(t.fs) // the caller's was synced by the first attempt
		}
		m, err := t.commitOnce(cur, c, naming, batch)
		if err == nil {
			return &Snapshot{Manifest: m, table: t}, nil
		}
		if !errors.Is(err, errVersionTaken) {
			return nil, t.wrap(cur.Version+1, "commit", err)
		}
		if c.Rebase == RebaseNever {
			return nil, t.wrap(cur.Version+1, "commit", t.refuseRebase(c, readVersion, cur.Version+1))
		}
		if attempt >= retries {
			return nil, t.wrap(cur.Version+1, "commit", fmt.Errorf("%w: gave up after %d rebases", ErrConflict, retries))
		}
		if err := ctx.Err(); err != nil {
			return nil, t.wrap(cur.Version+1, "commit", err)
		}
		latest, err := t.checkoutManifest(0)
		if err != nil {
			return nil, err
		}
		if err := t.checkRebase(ctx, c, readVersion, cur, latest); err != nil {
			return nil, t.wrap(cur.Version+1, "commit", err)
		}
		if err := checkWriterFlags(latest.WriterFlags); err != nil {
			return nil, t.wrap(latest.Version, "commit", err)
		}
		cur = latest
	}
}

// checkCommit checks a commit c planned on base before anything is
// written (op names it in errors) and returns the manifest naming of the
// table.
func (t *Table) checkCommit(ctx context.Context, base *Snapshot, c *Commit, op string) (ManifestNaming, error) {
	if base == nil {
		return NamingUnknown, t.errorf(0, op, "no base snapshot: a commit is planned against a version (Table.Checkout)")
	}
	if base.table.root != t.root {
		return NamingUnknown, t.errorf(base.Version, op, "the base snapshot belongs to another table (%s)", base.table.root)
	}
	if err := validateCommit(c); err != nil {
		return NamingUnknown, t.wrap(0, op, err)
	}
	if err := checkWriterFlags(base.WriterFlags); err != nil {
		return NamingUnknown, t.wrap(base.Version, op, err)
	}
	if err := t.deferredErr(); err != nil {
		return NamingUnknown, t.wrap(base.Version+1, op, err)
	}
	if err := ctx.Err(); err != nil {
		return NamingUnknown, t.wrap(base.Version+1, op, err)
	}
	if naming := namingOf(base.Manifest); naming != NamingUnknown {
		return naming, nil
	}
	return t.Naming(ctx)
}

// supportedWriterFlags are the writer flags whose rules this package
// follows when it commits; a table with any other writer flag is refused
// rather than written wrongly.
const supportedWriterFlags = FlagDeletionFiles | FlagStableRowIDs | FlagUseV2Format |
	FlagTableConfig | FlagNoTransactionFiles | FlagMixedFileVersions

func checkWriterFlags(flags uint64) error {
	if bad := flags &^ supportedWriterFlags; bad != 0 {
		return unsupportedf("writer feature flags %v are set; mvd cannot commit to this table", FlagNames(bad))
	}
	return nil
}

// errVersionTaken is internal: the version's manifest name already exists.
var errVersionTaken = errors.New("version already committed")

func validateCommit(c *Commit) error {
	if c == nil {
		return ErrEmptyCommit
	}
	if c.Overwrite && c.hasDeletes() {
		return errors.New("an overwrite cannot also delete rows")
	}
	if !c.Overwrite && (c.Schema != nil || c.DataFileVersion != "") {
		return errors.New("a schema or data file version can only change with an overwrite")
	}
	if c.InsertedRows != nil {
		if c.Overwrite {
			return errors.New("an overwrite cannot carry an inserted-rows key filter")
		}
		if !c.hasDeletes() && len(c.Fragments) == 0 {
			return errors.New("an inserted-rows key filter needs rows to delete or append")
		}
		if c.InsertedRows.Keys == nil {
			return errors.New("an inserted-rows key filter needs keys")
		}
	}
	if len(c.Rewrite) > 0 && (c.Overwrite || c.hasDeletes() || len(c.Fragments) > 0 || c.InsertedRows != nil) {
		return errors.New("a rewrite combines with schema metadata changes only")
	}
	for _, k := range c.DeleteSchemaMetadata {
		if _, ok := c.SchemaMetadata[k]; ok {
			return fmt.Errorf("schema metadata key %q is both set and deleted", k)
		}
	}
	if _, err := format.ParseFileVersion(string(c.DataFileVersion)); err != nil {
		return err
	}
	return nil
}

// namingOf is the naming scheme of m's file name, or NamingUnknown.
func namingOf(m *Manifest) ManifestNaming {
	if _, n, ok := parseManifestName(m.File); ok {
		return n
	}
	return NamingUnknown
}

// commitOnce builds and tries to publish base.Version+1, syncing batch
// (and the files it adds to it) before the publish. It returns
// errVersionTaken when that version exists; the files it wrote are then
// removed (they are referenced by nothing). batch is spent either way.
func (t *Table) commitOnce(base *Manifest, c *Commit, naming ManifestNaming, batch *vfs.SyncBatch) (*Manifest, error) {
	sv, err := t.buildAndStage(base, c, naming, batch)
	if err != nil {
		return nil, err
	}
	return t.publishOrRemove(sv)
}

// buildAndStage builds base.Version+1 and does phases 1 and 2 of its
// commit (stageVersion); on failure the files it wrote are removed. batch
// is spent either way.
func (t *Table) buildAndStage(base *Manifest, c *Commit, naming ManifestNaming, batch *vfs.SyncBatch) (*stagedVersion, error) {
	b, err := t.buildCommit(base, c, newUUID(), time.Now(), batch)
	if err != nil {
		batch.Abort()
		t.removeBestEffort(b)
		return nil, err
	}
	sv, err := t.stageVersion(b, naming)
	if err != nil {
		t.removeBestEffort(b)
		return nil, err
	}
	return sv, nil
}

// publishOrRemove does phase 3 (publishStaged); if the version was not
// published, the files the build wrote are removed (referenced by
// nothing), unless it may have been (ErrCommitUncertain).
func (t *Table) publishOrRemove(sv *stagedVersion) (*Manifest, error) {
	m, err := t.publishStaged(sv)
	if err != nil && !errors.Is(err, ErrCommitUncertain) {
		t.removeBestEffort(sv.b)
	}
	return m, err
}

func (t *Table) removeBestEffort(b *builtCommit) {
	if b == nil {
		return
	}
	for _, rel := range b.written {
		_ = t.objs.Delete(t.path(rel))
	}
}

// stagedVersion is a built version whose files are all written and
// durable, the manifest under a staging name: phases 1 and 2 of a commit.
type stagedVersion struct {
	b       *builtCommit
	naming  ManifestNaming
	version uint64
	final   string // the manifest's file name
	raw     []byte // its bytes
	// unpadded is the length raw would have without padding: what the
	// next manifest's staging file is sized for.
	unpadded int
	staged   vfs.Staged
}

// stageVersion writes the transaction and the manifest's staging file of b
// into b.batch (the deletion files already are) and syncs the batch:
// phases 1 and 2 of a commit. b.batch is spent either way.
func (t *Table) stageVersion(b *builtCommit, naming ManifestNaming) (*stagedVersion, error) {
	batch := b.batch
	defer batch.Abort() // on the paths that fail before the sync
	txnBytes, err := proto.Marshal(b.txn)
	if err != nil {
		return nil, fmt.Errorf("encode transaction: %w", err)
	}
	// Phase 1: the manifest's staging file, unsynced, beside the deletion
	// files buildCommit wrote. The transaction is inline (buildCommit).
	st := b.prepared.take()
	raw, unpadded, err := frameManifest(b.manifest, b.indexSection, txnBytes, b.base, st.Size())
	if err != nil {
		st.Discard()
		return nil, err
	}
	return t.stageManifest(b, naming, st, raw, unpadded)
}

// stageManifest writes the manifest file raw of b under a staging name
// (into st, the staging file made ahead, if there is one), beside what
// b.batch holds, and syncs b.batch: everything the manifest references
// (data, deletion and transaction files and their directories) and the
// manifest's own bytes become durable, all syncs at once (phase 2).
func (t *Table) stageManifest(b *builtCommit, naming ManifestNaming, st *vfs.PreparedStage, raw []byte, unpadded int) (*stagedVersion, error) {
	batch := b.batch
	version := b.manifest.GetVersion()
	final := manifestName(version, naming)
	var (
		staged vfs.Staged
		err    error
	)
	if st != nil {
		staged, err = st.Stage(t.path(versionsDir, final), raw, batch)
	} else {
		staged, err = vfs.Stage(t.objs, t.path(versionsDir, final), raw, batch)
	}
	if err != nil {
		return nil, fmt.Errorf("publish %s: %w", final, err)
	}
	if err := batch.Sync(); err != nil {
		staged.Discard()
		return nil, fmt.Errorf("sync version %d: %w", version, err)
	}
	return &stagedVersion{b: b, naming: naming, version: version, final: final, raw: raw, unpadded: unpadded, staged: staged}, nil
}

// writtenManifest is the Manifest of the manifest file raw, just encoded
// from pb: built from the message, not decoded again.
func (t *Table) writtenManifest(pb *tablepb.Manifest, raw []byte) (*Manifest, error) {
	section, err := manifestSection(raw)
	if err != nil {
		return nil, fmt.Errorf("the manifest just written: %w", err)
	}
	m, err := newManifest(pb, raw, section, nil, &t.frags)
	if err != nil {
		return nil, fmt.Errorf("the manifest just written: %w", err)
	}
	return m, nil
}

// publishStaged publishes the staged manifest: the commit point (phase 3),
// which fails with errVersionTaken if another writer took the version.
func (t *Table) publishStaged(sv *stagedVersion) (*Manifest, error) {
	b, version, final, raw := sv.b, sv.version, sv.final, sv.raw
	if err := t.deferredErr(); err != nil {
		sv.staged.Discard()
		return nil, err
	}
	var err error
	switch {
	case b.deferSync:
		// Visible now, durable once the background sync of _versions/
		// below has run (Commit.DeferSync).
		err = sv.staged.Link()
	case b.deferHint:
		// The hint is written in the background, after the spare staging
		// file below.
		err = sv.staged.Publish(nil)
	default:
		// The hint is written as soon as the version is visible, while
		// _versions/ is synced.
		err = sv.staged.Publish(func() { t.writeHint(version) })
	}
	if err != nil {
		switch {
		case errors.Is(err, fs.ErrExist):
			return nil, errVersionTaken
		case errors.Is(err, vfs.ErrNotDurable):
			// The version is visible and others may already build on it,
			// so it cannot be undone: it is reported as such.
			return nil, fmt.Errorf("%w: version %d: %w", ErrCommitUncertain, version, err)
		}
		return nil, fmt.Errorf("publish %s: %w", final, err)
	}
	// Built after the publish, not beside the sync: a goroutine started
	// then waits for a CPU behind the refresh's own (an idle vCPU wakes
	// slowly) and can delay it.
	m, err := t.writtenManifest(b.manifest, raw)
	if err != nil {
		return nil, err
	}
	m.File = final
	ref := VersionRef{Version: version, Naming: sv.naming, File: final}
	t.remember(ref, false)
	t.rememberOwn(m)
	if b.prepared != nil {
		// The caller prepares its commits: make the next one's staging file
		// now, between commits, rather than during the next.
		t.spare.make(t.fs, t.path(versionsDir), spareSize(sv.unpadded))
	}
	if b.next != nil {
		t.next.build(t, m, sv.naming, b.next)
	}
	// What makes the handle's next reads cheaper (the directory's stamp,
	// the decoded manifest cached under the file's stat) is two stats off
	// the critical path when the hint is written in the background anyway.
	settle := func() {
		t.noteOwnChange()
		if info, err := t.statManifest(ref); err == nil && info.Size() == int64(len(raw)) {
			t.cache.put(keyOf(final, info), m)
		}
	}
	if b.deferHint || b.deferSync {
		t.deferHint(version, b.deferSync, settle)
	} else {
		settle()
	}
	return m, nil
}

// frameManifest lays out a manifest file (lance-format.md §1.2): optional
// index section, the transaction, the manifest, its position and the tail.
// Fragments shared with base keep the encoding they were read with.
//
// A file that would be shorter than size is padded to exactly size with
// zeros between the transaction and the manifest, to fill a staging file
// written ahead to that size (vfs.PrepareTempStageSized). Every section
// is found by its offset (the manifest's from the tail, the others' from
// the manifest), and bytes between sections are never read: LanceDB reads
// such files, tests check it (TestStaleLanceDBHandle, the view interop
// tests).
//
// It returns the file's bytes and the length they would have unpadded.
func frameManifest(m *tablepb.Manifest, indexSection, txn []byte, base []*Fragment, size int) (raw []byte, unpadded int, err error) {
	head := frameHead(m, indexSection, txn)
	mb, err := marshalManifest(m, base)
	if err != nil {
		return nil, 0, fmt.Errorf("encode manifest: %w", err)
	}
	raw, unpadded = finishManifest(head, mb, size)
	return raw, unpadded, nil
}

// frameHead lays out what comes before the manifest section in a manifest
// file: the index section, if any, and the transaction, each
// length-prefixed, and records their offsets in m.
func frameHead(m *tablepb.Manifest, indexSection, txn []byte) []byte {
	var out []byte
	putSection := func(b []byte) uint64 {
		pos := uint64(len(out))
		out = binary.LittleEndian.AppendUint32(out, uint32(len(b)))
		out = append(out, b...)
		return pos
	}
	if indexSection != nil {
		pos := putSection(indexSection)
		m.IndexSection = &pos
	}
	pos := putSection(txn)
	m.TransactionSection = &pos
	return out
}

// finishManifest returns the manifest file of head (frameHead) and the
// manifest section mb, padded to size (frameManifest), and the length it
// would have unpadded.
func finishManifest(head, mb []byte, size int) (raw []byte, unpadded int) {
	unpadded = len(head) + 4 + len(mb) + manifestTailLen
	raw = make([]byte, 0, max(unpadded, size))
	raw = append(raw, head...)
	if pad := size - unpadded; pad > 0 {
		raw = append(raw, make([]byte, pad)...)
	}
	mpos := uint64(len(raw))
	raw = binary.LittleEndian.AppendUint32(raw, uint32(len(mb)))
	raw = append(raw, mb...)
	raw = binary.LittleEndian.AppendUint64(raw, mpos)
	raw = binary.LittleEndian.AppendUint16(raw, manifestMajor)
	raw = binary.LittleEndian.AppendUint16(raw, manifestMinor)
	return append(raw, manifestMagic...), unpadded
}

// writeHint updates latest_version_hint.json, best effort: readers treat it
// as a starting point only, so failures are ignored and it is not synced.
// It is written on every commit, as lance does: a reader probing forward
// from a stale hint could stop at a gap left by a cleanup that kept a
// tagged version, and take an old version for the latest.
func (t *Table) writeHint(version uint64) {
	_ = t.objs.Put(t.path(versionsDir, hintFile), []byte(`{"version":`+strconv.FormatUint(version, 10)+`}`))
}
