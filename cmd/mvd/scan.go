package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/spf13/cobra"

	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/lance/datafile"
)

// tableRowsForPeople caps the rows `--format table` prints when no
// --limit is given: a terminal is not a place for a million rows.
const tableRowsForPeople = 100

// scanFlags are the flags of `mvd table scan`.
type scanFlags struct {
	version    uint64
	columns    string
	withRowIDs bool
	limit      int64
	format     string
	selectSQL  string
	whereSQL   string
}

func newTableScanCmd(stdout io.Writer) *cobra.Command {
	var f scanFlags
	cmd := &cobra.Command{
		Use:   "scan PATH",
		Short: "read a version's rows, optionally filtered and projected with SQL",
		Long: `Scan prints the live rows of one version of the table (the latest unless
--version says otherwise) in LanceDB's scan order: fragment, then offset.

--select projects SQL expressions ("id, upper(name) AS shout") and --where
keeps the rows where a SQL predicate is TRUE; output columns get the types a
materialized view would get. The SQL dialect (quoting rules, functions,
extensions beyond LanceDB) is documented in README.md, section "SQL
expressions", and in sqlexpr/extensions.go.

Formats:
  jsonl  one JSON object per row, keys in schema order (the default)
  arrow  an Arrow IPC stream (--limit 0 writes just the schema)
  table  aligned columns for people, the first 100 rows unless --limit says
         otherwise. Strings print without quotes and a null as ∅; a string
         that is empty, is ∅, starts with " or holds a control character is
         quoted with escapes ("a\tb"), and so is a column name. Cells longer
         than 40 characters are cut with …`,
		Example: `  mvd table scan data/people.lance --limit 10 --format table
  mvd table scan data/people.lance --columns id,name --version 3
  mvd table scan data/people.lance --select "id, upper(name) AS shout" --where "age >= 18" --with-row-ids`,
		Args: onePath,
		RunE: func(cmd *cobra.Command, args []string) error {
			return tableScan(tableCtx(cmd), args[0], f, stdout)
		},
	}
	fs := cmd.Flags()
	versionFlag(fs, &f.version, "version", "table version to read, from 1 (default: the latest)")
	fs.StringVar(&f.columns, "columns", "", "comma-separated columns to read, in this order, e.g. `a,b` (default: all); not with --select or --where")
	fs.StringVar(&f.selectSQL, "select", "", "`SQL` projections, comma-separated, e.g. \"name, upper(name) AS shout\" (default: all columns)")
	fs.StringVar(&f.whereSQL, "where", "", "`SQL` filter: keep the rows where it is TRUE, e.g. \"age >= 18\"")
	fs.BoolVar(&f.withRowIDs, "with-row-ids", false, "add the columns _rowid, _rowaddr, _row_created_at_version and _row_last_updated_at_version")
	f.limit = -1
	fs.Var(limitValue{&f.limit}, "limit", "stop after N rows (default: all rows; 100 for --format table)")
	fs.StringVar(&f.format, "format", "jsonl", "output `FORMAT`: jsonl, arrow or table")
	return cmd
}

func tableScan(ctx context.Context, path string, f scanFlags, stdout io.Writer) error {
	if err := checkScanFlags(f); err != nil {
		return err
	}
	t, err := openTable(ctx, path)
	if err != nil {
		return err
	}
	m, err := t.Checkout(ctx, f.version)
	if err != nil {
		return err
	}
	opts, q, want, err := planScan(m, f)
	if err != nil {
		return err
	}
	sc, err := m.Scan(ctx, opts)
	if err != nil {
		return err
	}
	defer sc.Close()
	schema := sc.Schema()
	if q != nil {
		schema = q.schema
	}
	out := newRowWriter(f.format, schema, stdout)
	if err := printRows(ctx, sc, q, out, f.limit, want); err != nil {
		return err
	}
	return out.close()
}

// checkScanFlags refuses the --limit and --format values scan has no
// meaning for, before the table is opened.
func checkScanFlags(f scanFlags) error {
	if f.limit < -1 {
		return usagef("--limit must be a non-negative integer")
	}
	switch f.format {
	case "jsonl", "arrow", "table":
	default:
		return usagef("--format must be jsonl, arrow or table, not %q", f.format)
	}
	return nil
}

// planScan turns the flags into what to read from snapshot m: the scan
// options, the SQL query to apply to each batch (nil: none) and the
// number of rows to print (0: all).
func planScan(m *lance.Snapshot, f scanFlags) (lance.ScanOptions, *query, uint64, error) {
	opts := lance.ScanOptions{RowMeta: f.withRowIDs}
	if f.columns != "" {
		if f.selectSQL != "" {
			return opts, nil, 0, usagef("--columns and --select cannot be combined; list the columns in --select")
		}
		for _, c := range strings.Split(f.columns, ",") {
			opts.Columns = append(opts.Columns, strings.TrimSpace(c))
		}
	}
	var want uint64 // rows to print; 0 = all
	switch {
	case f.limit > 0:
		want = uint64(f.limit)
	case f.format == "table" && f.limit < 0:
		want = tableRowsForPeople
	}
	if f.selectSQL == "" && f.whereSQL == "" {
		opts.Limit = want // without a filter the scan itself can stop early
		return opts, nil, want, nil
	}
	as, err := m.Schema.Arrow()
	if err != nil {
		return opts, nil, 0, err
	}
	if opts.Columns != nil {
		// --columns with --where: the filter may read other columns;
		// compile against the table, print only the chosen ones.
		return opts, nil, 0, usagef("--columns and --where cannot be combined; use --select")
	}
	q, err := newQuery(as, f.selectSQL, f.whereSQL, f.withRowIDs)
	if err != nil {
		return opts, nil, 0, err
	}
	opts.Columns = q.columns
	return opts, q, want, nil
}

// printRows writes the batches of sc to out, through q when it is not
// nil, until limit is 0, want rows (0: all) are out or sc ends.
func printRows(ctx context.Context, sc *lance.Scanner, q *query, out rowWriter, limit int64, want uint64) error {
	mem := memory.DefaultAllocator
	var printed uint64
	for limit != 0 && (want == 0 || printed < want) {
		rec, err := sc.Next(ctx)
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
	return nil
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
