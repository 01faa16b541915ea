// Package incremental brings a materialized view from the source version of
// its watermark to a newer one at a cost that follows the change, not the
// tables: given the change set of the span (the source's row-level steps,
// composed by lance.Compose), the changed rows are read from the target
// version (whole new fragments scanned, the other rows taken by row id),
// the view rows to evict come from the provenance index, and a capped view
// is refilled from the source in scan order (Step).
package incremental
