package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/lance/datafile"
)

// tableRowsForPeople caps the rows `--format table` prints when no
// --limit is given: a terminal is not a place for a million rows.
const tableRowsForPeople = 100

func tableScan(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("table scan", flag.ContinueOnError)
	version := fs.Uint64("version", 0, "table version (default: latest)")
	columns := fs.String("columns", "", "comma-separated columns to read (default: all)")
	withRowIDs := fs.Bool("with-row-ids", false, "add _rowid, _rowaddr, _row_created_at_version, _row_last_updated_at_version")
	limit := fs.Int64("limit", -1, "stop after N rows")
	format := fs.String("format", "jsonl", "output format: jsonl, arrow or table")
	selectSQL := fs.String("select", "", `SQL projections, e.g. "name, upper(name) AS shout"`)
	whereSQL := fs.String("where", "", `SQL filter, e.g. "age >= 18"`)
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if *limit < -1 {
		return usagef("--limit must be a non-negative integer")
	}
	switch *format {
	case "jsonl", "arrow", "table":
	default:
		return usagef("--format must be jsonl, arrow or table, not %q", *format)
	}
	t, err := openTable(pos, "table scan")
	if err != nil {
		return err
	}
	m, err := t.Checkout(context.Background(), *version)
	if err != nil {
		return err
	}
	opts := lance.ScanOptions{RowMeta: *withRowIDs}
	if *columns != "" {
		if *selectSQL != "" {
			return usagef("--columns and --select cannot be combined; list the columns in --select")
		}
		for _, c := range strings.Split(*columns, ",") {
			opts.Columns = append(opts.Columns, strings.TrimSpace(c))
		}
	}
	var want uint64 // rows to print; 0 = all
	switch {
	case *limit > 0:
		want = uint64(*limit)
	case *format == "table" && *limit < 0:
		want = tableRowsForPeople
	}
	var q *query
	if *selectSQL != "" || *whereSQL != "" {
		as, err := m.Schema.Arrow()
		if err != nil {
			return err
		}
		if opts.Columns != nil {
			// --columns with --where: the filter may read other columns;
			// compile against the table, print only the chosen ones.
			return usagef("--columns and --where cannot be combined; use --select")
		}
		if q, err = newQuery(as, *selectSQL, *whereSQL, *withRowIDs); err != nil {
			return err
		}
		opts.Columns = q.columns
	} else {
		opts.Limit = want // without a filter the scan itself can stop early
	}
	sc, err := m.Scan(context.Background(), opts)
	if err != nil {
		return err
	}
	defer sc.Close()
	schema := sc.Schema()
	if q != nil {
		schema = q.schema
	}
	out := newRowWriter(*format, schema, stdout)
	mem := memory.DefaultAllocator
	var printed uint64
	for *limit != 0 && (want == 0 || printed < want) {
		rec, err := sc.Next(context.Background())
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		if q != nil {
			res, err := q.apply(mem, rec)
			rec.Release()
			if err != nil {
				return err
			}
			rec = res
		}
		if want > 0 && printed+uint64(rec.NumRows()) > want {
			cut := rec.NewSlice(0, int64(want-printed))
			rec.Release()
			rec = cut
		}
		printed += uint64(rec.NumRows())
		err = out.write(rec)
		rec.Release()
		if err != nil {
			return err
		}
	}
	return out.close()
}

// rowWriter prints batches in one of the scan formats.
type rowWriter interface {
	write(rec arrow.RecordBatch) error
	close() error
}

func newRowWriter(format string, schema *arrow.Schema, w io.Writer) rowWriter {
	switch format {
	case "arrow":
		return &arrowWriter{w: ipc.NewWriter(w, ipc.WithSchema(schema))}
	case "table":
		return &tableWriter{schema: schema, tw: tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)}
	}
	return &jsonlWriter{schema: schema, w: bufio.NewWriterSize(w, 1<<16)}
}

// jsonlWriter prints one JSON object per row, keys in schema order.
type jsonlWriter struct {
	schema *arrow.Schema
	w      *bufio.Writer
	buf    []byte
}

func (j *jsonlWriter) write(rec arrow.RecordBatch) error {
	for i := 0; i < int(rec.NumRows()); i++ {
		b := append(j.buf[:0], '{')
		for c, col := range rec.Columns() {
			if c > 0 {
				b = append(b, ',')
			}
			b = appendJSONKey(b, j.schema.Field(c).Name)
			b = append(b, ':')
			var err error
			if b, err = datafile.AppendJSON(b, col, i); err != nil {
				return fmt.Errorf("column %q row %d: %w", j.schema.Field(c).Name, i, err)
			}
		}
		b = append(b, '}', '\n')
		j.buf = b
		if _, err := j.w.Write(b); err != nil {
			return err
		}
	}
	return nil
}

func (j *jsonlWriter) close() error { return j.w.Flush() }

// appendJSONKey appends a JSON string (strconv quoting is Go syntax, not
// JSON, for control and non-ASCII characters).
func appendJSONKey(b []byte, s string) []byte {
	out, _ := json.Marshal(s) // a string always marshals
	return append(b, out...)
}

// arrowWriter writes an Arrow IPC stream.
type arrowWriter struct{ w *ipc.Writer }

func (a *arrowWriter) write(rec arrow.RecordBatch) error { return a.w.Write(rec) }
func (a *arrowWriter) close() error                      { return a.w.Close() }

// tableWriter prints aligned columns for people.
type tableWriter struct {
	schema *arrow.Schema
	tw     *tabwriter.Writer
	header bool
}

// maxCell keeps one wide value (a vector, a long text) from hiding the rest.
const maxCell = 40

func (t *tableWriter) write(rec arrow.RecordBatch) error {
	if !t.header {
		t.writeHeader()
	}
	for i := 0; i < int(rec.NumRows()); i++ {
		for c, col := range rec.Columns() {
			b, err := datafile.AppendJSON(nil, col, i)
			if err != nil {
				return err
			}
			cell := string(b)
			if uq, err := strconv.Unquote(cell); err == nil && strings.HasPrefix(cell, `"`) {
				cell = uq
			}
			cell = strings.NewReplacer("\t", " ", "\n", " ").Replace(cell)
			if r := []rune(cell); len(r) > maxCell {
				cell = string(r[:maxCell-1]) + "…"
			}
			if c > 0 {
				fmt.Fprint(t.tw, "\t")
			}
			fmt.Fprint(t.tw, cell)
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
		fmt.Fprint(t.tw, f.Name)
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
