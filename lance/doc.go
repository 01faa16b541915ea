// Package lance reads Lance tables as LanceDB 0.39 writes them, in pure Go.
//
// This file set covers everything above the data files: the versions of a
// table, the manifest of each version (schema, fragments, data files,
// deletion files, feature flags), the transaction that produced it, stable
// row-id sequences, row version sequences, and the change set between any
// two versions computed from that metadata alone.
//
// All file access goes through a vfs.FS. A Table is safe for concurrent use;
// Manifests and Fragments are immutable once returned.
//
// The format digest this code follows is ../shared/docs/lance-format.md;
// where it and the bytes LanceDB writes disagree, the bytes win.
package lance
