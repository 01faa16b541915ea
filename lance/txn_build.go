package lance

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/mvd-project/mvd/lance/internal/format"
	"github.com/mvd-project/mvd/lance/internal/pb/tablepb"
	"github.com/mvd-project/mvd/lance/internal/rowid"
	"github.com/mvd-project/mvd/vfs"
)

// builtCommit is a manifest and its transaction, ready to be framed.
type builtCommit struct {
	manifest     *tablepb.Manifest
	txn          *tablepb.Transaction
	indexSection []byte         // IndexSection protobuf carried over, or nil
	written      []string       // table-relative files this attempt wrote
	batch        *vfs.SyncBatch // where the attempt's files wait for their sync
	prepared     *Prepared      // the staging file made ahead, first attempt only
	deferHint    bool
	deferSync    bool        // DeferSync on a commit that changes no rows
	base         []*Fragment // the base version's fragments, whose encodings the manifest reuses
	next         *NextMetadata
}

// buildCommit builds version base.Version+1 from base and c. It writes the
// deletion files the new version needs (and nothing else) into batch,
// unsynced; on error the returned builtCommit still lists what was
// written, for removal.
func (t *Table) buildCommit(base *Manifest, c *Commit, txnUUID string, now time.Time, batch *vfs.SyncBatch) (*builtCommit, error) {
	version := base.Version + 1
	m := shallowManifest(base.pb)
	m.Version = version
	m.Timestamp = timestamppb.New(now)
	m.WriterVersion = &tablepb.Manifest_WriterVersion{Library: WriterLibrary, Version: WriterVersionString}
	// The transaction goes inline in the manifest only (transaction_section),
	// as lance writes it with transaction files disabled: lance reads the
	// inline copy first, and one file fewer is one create and two syncs
	// fewer per commit. Writer flag 32 says so, as lance sets it.
	m.TransactionFile = ""
	m.IndexSection, m.TransactionSection = nil, nil
	m.Tag = ""
	txn := &tablepb.Transaction{ReadVersion: base.Version, Uuid: txnUUID}
	b := &builtCommit{manifest: m, txn: txn, batch: batch, prepared: c.Prepared, deferHint: c.DeferHint, deferSync: c.DeferSync && c.rowsUntouched(), base: base.Fragments}
	if c.Rebase == RebaseNever {
		b.next = c.Next // a rebased commit is another version: nothing to build on
	}
	stable := base.StableRowIDs()

	if !c.Overwrite && base.pb.IndexSection != nil {
		sec, err := lengthPrefixed(base.raw, base.pb.GetIndexSection())
		if err != nil {
			return nil, fmt.Errorf("index section of version %d: %w", base.Version, err)
		}
		b.indexSection = sec
	}

	// Deletions first: they are resolved against base's fragments.
	del, err := t.deleteRowIDs(base, c.DeleteRowIDs, batch)
	if err != nil {
		b.written = append(b.written, del.files...) // removed by the caller
		return b, err
	}
	b.written = append(b.written, del.files...)
	if c.Overwrite {
		m.Fragments = nil
	} else if len(del.updated) > 0 || len(del.removed) > 0 {
		byID := make(map[uint64]*tablepb.DataFragment, len(del.updated))
		for _, f := range del.updated {
			byID[f.GetId()] = f
		}
		kept := m.Fragments[:0]
		for _, f := range m.Fragments {
			if slices.Contains(del.removed, f.GetId()) {
				continue
			}
			if nf := byID[f.GetId()]; nf != nil {
				f = nf
			}
			kept = append(kept, f)
		}
		m.Fragments = kept
	}

	// New fragments take the next ids and row ids; the txn records them
	// as the manifest does.
	nextFrag := uint64(0)
	if m.MaxFragmentId != nil {
		nextFrag = uint64(m.GetMaxFragmentId()) + 1
	}
	var added []*tablepb.DataFragment
	for i, nf := range c.Fragments {
		if nf.PhysicalRows == 0 {
			return b, fmt.Errorf("new fragment %d has no rows", i)
		}
		if nextFrag > uint64(^uint32(0)) {
			return b, unsupportedf("fragment id %d exceeds the u32 max_fragment_id", nextFrag)
		}
		f := &tablepb.DataFragment{Id: nextFrag, PhysicalRows: nf.PhysicalRows}
		for _, df := range nf.Files {
			f.Files = append(f.Files, &tablepb.DataFile{
				Path: df.Path, Fields: df.Fields, ColumnIndices: df.ColumnIndices,
				FileMajorVersion: df.Major, FileMinorVersion: df.Minor, FileSizeBytes: df.SizeBytes,
			})
		}
		if stable {
			ids, err := rowid.EncodeRowIDRange(m.NextRowId, nf.PhysicalRows)
			if err != nil {
				return b, err
			}
			vers, err := rowid.EncodeVersionRun(nf.PhysicalRows, version)
			if err != nil {
				return b, err
			}
			f.RowIdSequence = &tablepb.DataFragment_InlineRowIds{InlineRowIds: ids}
			f.CreatedAtVersionSequence = &tablepb.DataFragment_InlineCreatedAtVersions{InlineCreatedAtVersions: vers}
			f.LastUpdatedAtVersionSequence = &tablepb.DataFragment_InlineLastUpdatedAtVersions{InlineLastUpdatedAtVersions: vers}
			m.NextRowId += nf.PhysicalRows
		}
		id32 := uint32(nextFrag)
		m.MaxFragmentId = &id32
		nextFrag++
		added = append(added, f)
	}
	m.Fragments = append(m.Fragments, added...)
	var rewritten []*tablepb.Transaction_Rewrite_RewriteGroup
	if len(c.Rewrite) > 0 {
		if rewritten, err = t.buildRewrite(base, m, c.Rewrite); err != nil {
			return b, err
		}
	}

	if c.Overwrite {
		if c.Schema != nil {
			m.Fields = format.ProtoFields(c.Schema)
			m.SchemaMetadata = format.MetadataProto(c.Schema.Metadata)
		}
		if c.DataFileVersion != "" {
			m.DataFormat = &tablepb.Manifest_DataStorageFormat{FileFormat: "lance", Version: string(c.DataFileVersion)}
		}
	}
	if err := checkNewFiles(m, c.Fragments); err != nil {
		return b, err
	}
	for _, g := range c.Rewrite {
		if err := checkNewFiles(m, g.New); err != nil {
			return b, err
		}
	}

	// Schema metadata changes apply after an overwrite's new schema.
	if c.touchesMetadata() {
		if m.SchemaMetadata == nil {
			m.SchemaMetadata = map[string][]byte{}
		}
		for k, v := range c.SchemaMetadata {
			m.SchemaMetadata[k] = []byte(v)
		}
		for _, k := range c.DeleteSchemaMetadata {
			delete(m.SchemaMetadata, k)
		}
	}

	// Flag 1 is set exactly while some fragment has a deletion file.
	hasDeletions := false
	for _, f := range m.Fragments {
		if f.GetDeletionFile() != nil {
			hasDeletions = true
		}
	}
	m.WriterFeatureFlags |= FlagNoTransactionFiles
	for _, flags := range []*uint64{&m.ReaderFeatureFlags, &m.WriterFeatureFlags} {
		if hasDeletions {
			*flags |= FlagDeletionFiles
		} else {
			*flags &^= FlagDeletionFiles
		}
	}

	switch {
	case len(rewritten) > 0:
		txn.Operation = &tablepb.Transaction_Rewrite_{Rewrite: &tablepb.Transaction_Rewrite{Groups: rewritten}}
	case c.Overwrite:
		txn.Operation = &tablepb.Transaction_Overwrite_{Overwrite: &tablepb.Transaction_Overwrite{
			Fragments: added, Schema: m.Fields, SchemaMetadata: m.SchemaMetadata,
		}}
	case c.InsertedRows != nil || len(added) > 0 && (len(del.updated) > 0 || len(del.removed) > 0):
		u := &tablepb.Transaction_Update{
			RemovedFragmentIds: del.removed, UpdatedFragments: del.updated, NewFragments: added,
			UpdateMode: tablepb.Transaction_REWRITE_ROWS,
		}
		if c.InsertedRows != nil {
			id, err := keyFilterFieldID(base.Schema, c.InsertedRows)
			if err != nil {
				return b, err
			}
			setInsertedRows(u, encodeKeyFilter(id, c.InsertedRows))
		}
		txn.Operation = &tablepb.Transaction_Update_{Update: u}
	case len(added) > 0:
		txn.Operation = &tablepb.Transaction_Append_{Append: &tablepb.Transaction_Append{Fragments: added}}
	case len(del.updated) > 0 || len(del.removed) > 0:
		txn.Operation = &tablepb.Transaction_Delete_{Delete: &tablepb.Transaction_Delete{
			UpdatedFragments: del.updated, DeletedFragmentIds: del.removed,
		}}
	case c.touchesMetadata():
		txn.Operation = &tablepb.Transaction_UpdateConfig_{UpdateConfig: &tablepb.Transaction_UpdateConfig{
			SchemaMetadataUpdates: schemaMetadataUpdates(c),
		}}
	default:
		return b, ErrEmptyCommit
	}
	return b, nil
}

// shallowManifest copies the manifest message src for the next version
// without copying its fragments: a deep proto.Clone costs O(fragments)
// allocations per commit (every row-id and version sequence), though a
// commit changes a few fragments at most. The fragment list and the
// schema metadata map are copied, since buildCommit edits them; every
// other composite field (schema fields, config, fragments themselves) is
// shared with src and only ever replaced, never edited, here. Unknown
// fields are carried over, as a clone does. The fields are copied one by
// one (a protoreflect walk costs several times more on a small commit's
// path); TestShallowManifest fails if a field of the message is missing.
func shallowManifest(src *tablepb.Manifest) *tablepb.Manifest {
	dst := &tablepb.Manifest{
		Fields:             src.Fields,
		Fragments:          slices.Clone(src.Fragments),
		Version:            src.Version,
		VersionAuxData:     src.VersionAuxData,
		SchemaMetadata:     maps.Clone(src.SchemaMetadata),
		IndexSection:       src.IndexSection,
		Timestamp:          src.Timestamp,
		Tag:                src.Tag,
		ReaderFeatureFlags: src.ReaderFeatureFlags,
		WriterFeatureFlags: src.WriterFeatureFlags,
		MaxFragmentId:      src.MaxFragmentId,
		TransactionFile:    src.TransactionFile,
		WriterVersion:      src.WriterVersion,
		NextRowId:          src.NextRowId,
		DataFormat:         src.DataFormat,
		Config:             src.Config,
		BasePaths:          src.BasePaths,
		TableMetadata:      src.TableMetadata,
		Branch:             src.Branch,
		TransactionSection: src.TransactionSection,
	}
	if u := src.ProtoReflect().GetUnknown(); len(u) > 0 {
		dst.ProtoReflect().SetUnknown(u)
	}
	return dst
}

// schemaMetadataUpdates is the UpdateMap form Lance 12 writes for
// schema-metadata changes (the older map fields stay empty).
func schemaMetadataUpdates(c *Commit) *tablepb.Transaction_UpdateMap {
	um := &tablepb.Transaction_UpdateMap{}
	keys := make([]string, 0, len(c.SchemaMetadata))
	for k := range c.SchemaMetadata {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		v := c.SchemaMetadata[k]
		um.UpdateEntries = append(um.UpdateEntries, &tablepb.Transaction_UpdateMapEntry{Key: k, Value: &v})
	}
	for _, k := range c.DeleteSchemaMetadata {
		um.UpdateEntries = append(um.UpdateEntries, &tablepb.Transaction_UpdateMapEntry{Key: k})
	}
	return um
}

// checkNewFiles refuses data files that LanceDB would refuse: a version
// other than the table's (unless flag 256 allows mixing) or field ids the
// schema does not have.
func checkNewFiles(m *tablepb.Manifest, frags []NewFragment) error {
	want := FileVersion(m.GetDataFormat().GetVersion())
	ids := make(map[int32]bool, len(m.Fields))
	for _, f := range m.Fields {
		ids[f.GetId()] = true
	}
	mixed := m.GetReaderFeatureFlags()&FlagMixedFileVersions != 0
	for _, nf := range frags {
		for _, df := range nf.Files {
			got := df.Version()
			if !mixed && want != "" && got != want {
				return fmt.Errorf("data file %s has version %s but the table's is %s", df.Path, got, want)
			}
			for _, id := range df.Fields {
				if id >= 0 && !ids[id] {
					return fmt.Errorf("data file %s holds field id %d, which the schema does not have", df.Path, id)
				}
			}
			if strings.Contains(df.Path, "/") {
				return fmt.Errorf("data file path %q must be a name inside data/", df.Path)
			}
		}
	}
	return nil
}
