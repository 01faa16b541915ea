// Package datawriter writes Lance data files (format 2.1 and 2.2) that
// LanceDB 0.39 reads, from Arrow record batches that match a table schema
// exactly.
//
// It writes the simplest valid layouts (lance-format.md §5.2): mini-block
// pages with Flat values, Variable (u32 offsets) strings and Flat(16)
// definition levels for narrow columns; full-zip pages for fixed-size
// lists. No compression is applied: none is needed for LanceDB to read the
// files, and none has yet been shown to pay for mvd's views.
package datawriter
