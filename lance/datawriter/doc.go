// Package datawriter writes Lance data files (format 2.0, 2.1 and 2.2)
// that LanceDB 0.39 reads, from Arrow record batches that match a table
// schema exactly.
//
// It writes mini-block pages (lance-format.md §5.2) for narrow values,
// full-zip pages for fixed-size lists (also repeated) and, in 2.1, for
// string or binary values too wide for a 32 KiB mini-block chunk, and for
// fixed-width values as wide; a constant (all-null) layout for null-typed
// columns. Structs and lists nest freely (their validity and offsets are
// folded into each leaf's levels). Dictionary-typed columns keep their
// dictionary, as LanceDB writes them.
//
// 2.2 pages are compressed as LanceDB 0.39 compresses them, chosen per
// page where it pays (see BenchmarkWrite in bench/ for the bytes against
// LanceDB's): integers, dates, times and timestamps bit-packed (bitpack.go),
// rep/def levels bit-packed out of line (levelpack.go), string and binary
// pages dictionary-encoded when that halves them (strdict.go), other
// string pages of 32 KiB and more FSST-compressed (fsst.go). 2.1 and 2.0
// pages are written plain (Flat values, Variable strings, Flat(16) levels).
//
// Not written (ErrUnsupported, naming the field): maps, fixed-size lists
// of booleans (mvd's reader refuses both), dictionaries of other than
// string or binary items.
package datawriter
