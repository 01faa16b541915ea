// Package lance reads Lance tables as LanceDB 0.39 writes them, in pure Go.
//
// This file set covers everything above the data files: the versions of a
// table, the manifest of each version (schema, fragments, data files,
// deletion files, feature flags), the transaction that produced it, stable
// row-id sequences, row version sequences, and the change set between any
// two versions computed from that metadata alone.
//
// A Snapshot (Table.Checkout) is one table at one version; every read hangs
// off it: Scan and Take stream Arrow batches, Locate, CountRows,
// ScanRowMeta, FragmentRows and Transaction read metadata, and Changes
// compares two snapshots. Every call that does I/O takes a context.Context,
// checked between pages and fragments.
//
// It also writes versions LanceDB 0.39 reads (Create, Table.Commit against a
// base snapshot): appends, deletes by stable row id, delete-and-append in
// one version, overwrites and schema-metadata updates (alone or riding a
// data commit), each one commit with a correct transaction, published
// put-if-not-exists and, by the commit's RebasePolicy, rebased over
// compatible concurrent commits or refused on any (ErrConflict). Data files
// are written by package lance/datawriter.
//
// All file access goes through a vfs.FS; the commit path writes only
// through its object-store view (vfs.ObjectStore: PutIfAbsent, Put, Open,
// List, Delete), so a manifest publish is one put-if-absent. The schema
// tree, file versions, operation kinds and error sentinels come from
// lance/internal/format, shared with the data file reader (lance/datafile)
// and writer (lance/datawriter). Concurrency: Table and Snapshot
// are safe for concurrent use (a Snapshot, its Manifest and Fragments are
// immutable); a Scanner or Taker belongs to one goroutine.
//
// The format digest this code follows is ../shared/docs/lance-format.md;
// where it and the bytes LanceDB writes disagree, the bytes win.
package lance
