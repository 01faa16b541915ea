package lance

import (
	"strconv"

	"github.com/mvd-project/mvd/lance/internal/format"
	"github.com/mvd-project/mvd/vfs"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
)

// MaxRowsPerFragment is LanceDB 0.39's cap on the rows of a fragment;
// writers split larger appends into several fragments.
const MaxRowsPerFragment = format.MaxRowsPerFragment

// WriterLibrary and WriterVersionString are what mvd records as the
// manifest's writer_version.
const (
	WriterLibrary       = "mvd"
	WriterVersionString = "0.1.0"
)

// NewFragment is a fragment whose data files are written and durable but
// not yet part of any version (what lance/datawriter returns).
type NewFragment = format.NewFragment

// RebasePolicy says what a commit does when another writer published the
// version it was going to be.
type RebasePolicy uint8

const (
	// RebaseCompatible rebuilds the commit on the newer version when every
	// commit in between is compatible with it, as Lance does: an append
	// goes over anything that keeps rows and schema; a delete also needs
	// its rows untouched; a schema-metadata change needs its keys
	// untouched. Anything else is a *ConflictError.
	RebaseCompatible RebasePolicy = iota
	// RebaseNever refuses on any concurrent commit with a *ConflictError
	// naming the version that won. A materialized-view refresh uses it: a
	// refresh must never land on a view state it did not plan against.
	RebaseNever
)

func (p RebasePolicy) String() string {
	switch p {
	case RebaseCompatible:
		return "compatible"
	case RebaseNever:
		return "never"
	}
	return "RebasePolicy(" + strconv.Itoa(int(p)) + ")"
}

// Commit describes the changes of one table version, planned against the
// base snapshot passed to Table.Commit. The fields combine: DeleteRowIDs
// with Fragments is a delete-and-append (one Update transaction); either
// alone is a Delete or an Append; Overwrite replaces every fragment;
// SchemaMetadata rides along with any of them in the same version, or
// alone (an UpdateConfig transaction).
type Commit struct {
	// DeleteRowIDs are stable row ids to delete.
	DeleteRowIDs *roaring64.Bitmap
	// Fragments are new fragments to add.
	Fragments []NewFragment
	// Overwrite replaces every fragment with Fragments. Row ids keep
	// counting from the table's next_row_id; indices are dropped.
	Overwrite bool
	// Schema, with Overwrite, replaces the table schema (and its
	// metadata); nil keeps it.
	Schema *Schema
	// DataFileVersion, with Overwrite, changes the table's data file
	// version (V2_0, V2_1, V2_2); "" keeps it.
	DataFileVersion FileVersion
	// SchemaMetadata upserts schema metadata keys.
	SchemaMetadata map[string]string
	// DeleteSchemaMetadata removes schema metadata keys.
	DeleteSchemaMetadata []string
	// InsertedRows, when set, makes the commit an Update transaction (even
	// without deletes) that carries this inserted-rows key filter, as
	// LanceDB's materialized-view refresh does (see RefreshKeyFilter):
	// Lance then never rebases another filtered Update over it, nor this
	// one over another whose keys may intersect.
	InsertedRows *KeyFilter
	// Rewrite compacts fragments (a Rewrite transaction, as Lance's
	// compaction writes): each group's old fragments give way to new ones
	// holding the same live rows with the same stable row ids and row
	// versions. It combines with SchemaMetadata only (which the manifest
	// carries; the transaction records the rewrite). Rebased, it needs
	// its old fragments unchanged.
	Rewrite []RewriteGroup
	// Rebase says whether the commit may be rebuilt over concurrent
	// commits (RebaseCompatible, the default) or fails on any
	// (RebaseNever).
	Rebase RebasePolicy
	// MaxRetries bounds rebases after conflicts; 0 means 20, as Lance.
	MaxRetries int
	// Pending holds what the caller wrote for this commit but left
	// unsynced, typically the data files of Fragments written by a
	// datawriter.FragmentWriter after DeferSync(Pending): Commit syncs
	// them together with its own files, before it publishes anything.
	// Commit always spends the batch (synced, or aborted on failure);
	// after a failure the caller removes its files as usual. nil means
	// the data files are durable already.
	Pending *vfs.SyncBatch
	// Prepared, from Table.Prepare, is the commit's staging file made
	// ahead of time; the first attempt uses it. The caller still
	// releases it.
	Prepared *Prepared
	// DeferHint writes the version hint of the new version in the
	// background once the commit has returned, followed by a sync of
	// _versions/, so that neither this commit nor the next waits for it
	// (Table.Flush waits). Until then the hint is one version behind,
	// which readers probe past.
	DeferHint bool
	// DeferSync, on a commit that changes no rows (schema metadata or
	// config only, such as a refresh that moves a view's watermark),
	// returns once the new manifest is durable and linked, and leaves the
	// sync of _versions/ that makes the link durable to the background,
	// with the version hint (DeferHint is implied): one sync fewer on the
	// commit's path, and one fewer in all. Until that sync ends, a power
	// loss or kernel crash can lose this version, which leaves the table
	// at the version before it with the same rows; never an earlier
	// version, which a later commit's sync makes durable too. If the sync
	// fails, every later commit through this handle fails with an error
	// wrapping vfs.ErrNotDurable (the handle is not retried on: reopen the
	// table), and WaitDurable and Flush return it. A commit that changes
	// rows ignores DeferSync: it is durable when it returns.
	DeferSync bool
	// Next, on a commit that refuses rebases, describes the metadata-only
	// commit expected next: once this one is published, it is built in
	// the background, for StagePrebuilt (nil: none).
	Next *NextMetadata
}

func (c *Commit) touchesMetadata() bool {
	return len(c.SchemaMetadata) > 0 || len(c.DeleteSchemaMetadata) > 0
}

// rowsUntouched reports whether c leaves every row and the schema as they
// are: schema metadata or config only (DeferSync).
func (c *Commit) rowsUntouched() bool {
	return !c.hasDeletes() && len(c.Fragments) == 0 && len(c.Rewrite) == 0 && !c.Overwrite && c.Schema == nil && c.DataFileVersion == ""
}

func (c *Commit) hasDeletes() bool { return c.DeleteRowIDs != nil && !c.DeleteRowIDs.IsEmpty() }

// metadataKeys lists the schema metadata keys the commit changes.
func (c *Commit) metadataKeys() []string {
	keys := make([]string, 0, len(c.SchemaMetadata)+len(c.DeleteSchemaMetadata))
	for k := range c.SchemaMetadata {
		keys = append(keys, k)
	}
	return append(keys, c.DeleteSchemaMetadata...)
}
