// Package checkpoint keeps mvd's per-view state in Badger (SyncWrites on)
// under one directory, DIR/.mvd/state/ for the daemon:
//
//   - progress: a cache of each view's watermark (incarnation, source
//     version, view version) so that a restart knows where views stood
//     without opening them all first. It is never trusted over the view's
//     own metadata: the view's Lance commit carries the real watermark,
//     and a Progress that disagrees with it loses and is overwritten;
//   - refresh history: one record per refresh (mode, rows, duration, lag,
//     error), bounded per view by a retention count, listed newest first;
//   - blobs: small values keyed per view, for caches such as a provenance
//     index (always checked against the view version they reflect).
//
// Only one process may open the directory; another gets ErrLocked.
package checkpoint
