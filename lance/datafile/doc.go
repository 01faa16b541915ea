// Package datafile decodes Lance data files (file formats 2.0, 2.1 and 2.2,
// as LanceDB 0.39 writes them, and the legacy format 0.1, see legacy.go)
// into Arrow arrays.
//
// Open reads one data file's footer, offset tables, global buffer 0 (the
// file's own schema, a lance.file.FileDescriptor) and every column's
// metadata. ReadField decodes one top-level field for a row range and
// ReadFieldRows for a sorted set of rows, reading only the pages that hold
// them; several pages decode concurrently (at most four at a time). In 2.1+
// files a ReadFieldRows call reads and decodes each byte at most once: per
// page, the chunk metadata and dictionary once, only the chunks holding
// the rows (neighbours in one read), each chunk once, and FSST and
// dictionary values only for the rows kept.
//
// Columns are mapped to fields from the file's own schema, which lists the
// same field ids as the manifest's DataFile.fields: in 2.0 every field,
// parents included, has a column; in 2.1 and later only leaves do, in
// depth-first order. A field id the file does not contain (a column added
// to the table after the file was written) reads as nulls.
//
// Memory follows the pages a read touches: a batch decodes the whole pages
// that overlap it (pages are a few MB), never the whole file.
//
// The decoder is strict: a layout, compression, protobuf field or
// structure it does not know is an error naming the file, column and page,
// never a column of nulls. Corrupt input gives errors, not panics.
//
// The file's schema (Reader.Schema) is the schema tree of package
// lance/internal/format, the one every layer shares (lance.Schema), with
// its Arrow mapping; AppendJSON renders values with mvd's JSON conventions
// (shared with the CLI and the LanceDB differential tests). Errors wrap the
// shared sentinels: a file that cannot be decoded is lance.ErrCorrupt, a
// feature this decoder does not know lance.ErrUnsupported.
package datafile
