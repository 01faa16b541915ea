package lance

import (
	"context"
	"errors"
	"fmt"

	"github.com/mvd-project/mvd/lance/internal/pb/tablepb"
	"github.com/mvd-project/mvd/vfs"
)

// CreateOptions describes a new table.
type CreateOptions struct {
	// Schema is the table schema (see NewSchemaFromArrow), with its
	// schema and field metadata.
	Schema *Schema
	// Fragments are the initial rows, already written with the schema's
	// field ids in DataFileVersion.
	Fragments []NewFragment
	// DataFileVersion is V2_2 (the default, as LanceDB 0.39), V2_1 or
	// V2_0.
	DataFileVersion FileVersion
	// PlainRowIDs turns stable row ids off; they are on by default
	// because mvd tracks changes by stable row id.
	PlainRowIDs bool
	// V1ManifestNames names manifests "N.manifest" instead of the
	// default V2 (inverted, zero-padded) names.
	V1ManifestNames bool
	// Pending holds unsynced data files of Fragments (see Commit.Pending);
	// Create syncs them with its own files and always spends it.
	Pending *vfs.SyncBatch
}

// Create creates a table at root and commits its version 1 (an Overwrite
// transaction read at version 0, as LanceDB writes). It fails with an
// error wrapping ErrConflict if root already has a version 1.
func Create(ctx context.Context, fsys vfs.FS, root string, opts CreateOptions) (*Table, *Snapshot, error) {
	t := newTable(fsys, root)
	defer opts.Pending.Abort() // unless synced below
	if err := ctx.Err(); err != nil {
		return nil, nil, t.wrap(1, "create table", err)
	}
	if opts.Schema == nil || len(opts.Schema.Fields) == 0 {
		return nil, nil, t.errorf(0, "create table", "a table needs a schema with at least one field")
	}
	dfv := opts.DataFileVersion
	if dfv == "" {
		dfv = DefaultFileVersion
	}
	if err := validateCommit(&Commit{Overwrite: true, DataFileVersion: dfv}); err != nil {
		return nil, nil, t.wrap(0, "create table", err)
	}
	if refs, _, err := t.listManifests(); err == nil {
		last := refs[len(refs)-1]
		return nil, nil, t.wrap(1, "create table", &ConflictError{Version: last.Version, Operation: OpUnknown, Reason: fmt.Sprintf("%s is already a table", root)})
	}
	var flags uint64
	if !opts.PlainRowIDs {
		flags = FlagStableRowIDs
	}
	// Version 0 is the empty table every creation is read against.
	pb := &tablepb.Manifest{
		ReaderFeatureFlags: flags,
		WriterFeatureFlags: flags,
		DataFormat:         &tablepb.Manifest_DataStorageFormat{FileFormat: "lance", Version: string(dfv)},
	}
	base := &Manifest{ReaderFlags: flags, WriterFlags: flags, Schema: opts.Schema, pb: pb}
	c := &Commit{Overwrite: true, Schema: opts.Schema, Fragments: opts.Fragments, DataFileVersion: dfv}
	naming := NamingV2
	if opts.V1ManifestNames {
		naming = NamingV1
	}
	batch := opts.Pending
	if batch == nil {
		batch = vfs.NewSyncBatch(fsys)
	}
	m, err := t.commitOnce(base, c, naming, batch)
	if errors.Is(err, errVersionTaken) {
		err = &ConflictError{Version: 1, Operation: OpOverwrite, Reason: fmt.Sprintf("%s already has a version 1", root)}
	}
	if err != nil {
		return nil, nil, t.wrap(1, "create table", err)
	}
	return t, &Snapshot{Manifest: m, table: t}, nil
}
