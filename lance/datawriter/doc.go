// Package datawriter writes Lance data files (format 2.0, 2.1 and 2.2)
// that LanceDB 0.39 reads, from Arrow record batches that match a table
// schema exactly.
//
// It writes the simplest valid layouts (lance-format.md §5.2): mini-block
// pages with Flat values, Variable (u32 offsets) strings and Flat(16)
// rep/def levels; full-zip pages for fixed-size lists (also repeated) and,
// in 2.1, for string or binary values too wide for a 32 KiB mini-block
// chunk, and for fixed-width values as wide; a constant (all-null) layout
// for null-typed columns. Structs and lists nest freely (their validity
// and offsets are folded into each leaf's levels).
// Dictionary-typed columns keep their dictionary, as LanceDB writes them.
// No compression is applied: none is needed for LanceDB to read the files,
// and none has yet been shown to pay for mvd's views.
//
// Not written (ErrUnsupported, naming the field): maps, fixed-size lists
// of booleans (mvd's reader refuses both), dictionaries of other than
// string or binary items.
package datawriter
