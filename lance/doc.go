// Package lance reads Lance tables as LanceDB 0.39 writes them, in pure Go.
//
// This file set covers everything above the data files: the versions of a
// table, the manifest of each version (schema, fragments, data files,
// deletion files, feature flags), the transaction that produced it, stable
// row-id sequences, row version sequences, and the change set between any
// two versions computed from that metadata alone.
//
// It also writes versions LanceDB 0.39 reads (Create, Table.Commit): appends,
// deletes by stable row id, delete-and-append in one version, overwrites and
// schema-metadata updates, each one commit with a correct transaction,
// published put-if-not-exists and rebased over compatible concurrent
// commits (ErrConflict otherwise). Data files are written by package
// lance/datawriter.
//
// All file access goes through a vfs.FS. A Table is safe for concurrent use;
// Manifests and Fragments are immutable once returned.
//
// The format digest this code follows is ../shared/docs/lance-format.md;
// where it and the bytes LanceDB writes disagree, the bytes win.
package lance
