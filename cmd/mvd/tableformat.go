package main

import (
	"encoding/json"
	"fmt"
	"strconv"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/mvd-project/mvd/lance/datafile"
)

// tableWriter prints `--format table`: aligned columns for people.
//
// A cell shows a value as jsonl does, except that a string (and any value
// jsonl prints as a string: dates, timestamps, decimals, binary) is shown
// without its quotes. A null shows as ∅, which no bare string can look
// like: a string is quoted, with Go escapes, when it is empty, is "∅",
// starts with a quote, or holds a character that is not printable (tabs,
// newlines, other control characters), so that no value breaks the
// alignment and null never looks like the string "null". Column names
// follow the same rule. Cells are cut at maxCell characters with "…".
type tableWriter struct {
	schema *arrow.Schema
	tw     *tabwriter.Writer
	header bool
}

// nullCell is how --format table shows a null.
const nullCell = "∅"

// maxCell keeps one wide value (a vector, a long text) from hiding the rest.
const maxCell = 40

func (t *tableWriter) write(rec arrow.RecordBatch) error {
	if !t.header {
		t.writeHeader()
	}
	var buf []byte
	for i := 0; i < int(rec.NumRows()); i++ {
		for c, col := range rec.Columns() {
			var err error
			if buf, err = datafile.AppendJSON(buf[:0], col, i); err != nil {
				return fmt.Errorf("column %q row %d: %w", t.schema.Field(c).Name, i, err)
			}
			if c > 0 {
				fmt.Fprint(t.tw, "\t")
			}
			fmt.Fprint(t.tw, clip(tableCell(buf)))
		}
		fmt.Fprintln(t.tw)
	}
	return nil
}

func (t *tableWriter) writeHeader() {
	for c, f := range t.schema.Fields() {
		if c > 0 {
			fmt.Fprint(t.tw, "\t")
		}
		fmt.Fprint(t.tw, clip(bareOrQuoted(f.Name)))
	}
	fmt.Fprintln(t.tw)
	t.header = true
}

func (t *tableWriter) close() error {
	if !t.header {
		t.writeHeader()
	}
	return t.tw.Flush()
}

// tableCell turns a value's JSON (as AppendJSON writes it) into its cell.
func tableCell(js []byte) string {
	if string(js) == "null" {
		return nullCell
	}
	if len(js) > 0 && js[0] == '"' {
		var s string
		if err := json.Unmarshal(js, &s); err == nil {
			return bareOrQuoted(s)
		}
	}
	// Numbers, booleans, lists and structs: JSON text, whose strings are
	// quoted and escaped already.
	return string(js)
}

// bareOrQuoted shows s as is when that is unambiguous and keeps the
// alignment, else quoted with escapes.
func bareOrQuoted(s string) string {
	if s == "" || s == nullCell || s[0] == '"' {
		return strconv.Quote(s)
	}
	for _, r := range s {
		if !strconv.IsPrint(r) || r == utf8.RuneError {
			return strconv.Quote(s)
		}
	}
	return s
}

// clip cuts a cell to maxCell characters.
func clip(cell string) string {
	if utf8.RuneCountInString(cell) <= maxCell {
		return cell
	}
	r := []rune(cell)
	return string(r[:maxCell-1]) + "…"
}
