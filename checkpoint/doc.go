// Package checkpoint keeps mvd's per-view state in Badger (SyncWrites on)
// under one directory, DIR/.mvd/state/ for the daemon:
//
//   - kept source states: per view, the state of its source at its
//     watermark (matview's encoding of a lance.VersionState), written off
//     the refresh's path, so that a refresh after the source's owner
//     cleaned that version up stays incremental. It is stored in
//     content-defined chunks (chunk.go): a state written again after one
//     more source commit writes only the chunks that commit changed;
//   - refresh history: one record per refresh (mode, rows, duration, lag,
//     error), bounded per view by a retention count, listed newest first;
//   - blobs: small values keyed per view, for caches such as a provenance
//     index (always checked against the view version they reflect).
//
// Only one process may open the directory; another gets ErrLocked.
package checkpoint
