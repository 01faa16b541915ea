package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/mvd-project/mvd/arrowjson"
	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/vfs"
)

func tableCommand(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return usagef("missing table command (versions, schema, changes, scan, copy)")
	}
	switch args[0] {
	case "versions":
		return tableVersions(args[1:], stdout)
	case "schema":
		return tableSchema(args[1:], stdout)
	case "changes":
		return tableChanges(args[1:], stdout)
	case "scan":
		return tableScan(args[1:], stdout)
	case "copy":
		return tableCopy(args[1:], stdout, stderr)
	}
	return usagef("unknown table command %q (versions, schema, changes, scan, copy)", args[0])
}

// openTable parses the single PATH argument and opens the table.
func openTable(positional []string, cmd string) (*lance.Table, error) {
	if len(positional) != 1 {
		return nil, usagef("%s takes exactly one table path, got %d arguments", cmd, len(positional))
	}
	return lance.Open(context.Background(), vfs.OS(), positional[0])
}

// versionJSON is one line of `mvd table versions --json`.
type versionJSON struct {
	Version   uint64 `json:"version"`
	Timestamp string `json:"timestamp"`
	Operation string `json:"operation"`
	Rows      uint64 `json:"rows"`
}

func tableVersions(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("table versions", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print JSON lines")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	t, err := openTable(pos, "table versions")
	if err != nil {
		return err
	}
	refs, err := t.Versions(context.Background())
	if err != nil {
		return err
	}
	enc := json.NewEncoder(stdout)
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	if !*asJSON {
		fmt.Fprintln(tw, "VERSION\tTIMESTAMP\tOPERATION\tROWS")
	}
	for _, ref := range refs {
		m, err := t.Checkout(context.Background(), ref.Version)
		if err != nil {
			return err
		}
		rows, err := m.CountRows(context.Background())
		if err != nil {
			return err
		}
		opName := "unknown"
		tx, err := m.Transaction(context.Background())
		if err != nil {
			return err
		}
		if tx != nil {
			opName = string(tx.Operation)
		}
		v := versionJSON{Version: m.Version, Timestamp: m.Timestamp.UTC().Format(time.RFC3339Nano), Operation: opName, Rows: rows}
		if *asJSON {
			if err := enc.Encode(v); err != nil {
				return err
			}
			continue
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%d\n", v.Version, v.Timestamp, v.Operation, v.Rows)
	}
	return tw.Flush()
}

func tableSchema(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("table schema", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print JSON")
	version := fs.Uint64("version", 0, "table version (default: latest)")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	t, err := openTable(pos, "table schema")
	if err != nil {
		return err
	}
	m, err := t.Checkout(context.Background(), *version)
	if err != nil {
		return err
	}
	as, err := m.Schema.Arrow()
	if err != nil {
		return err
	}
	cs, err := arrowjson.FromSchema(as)
	if err != nil {
		return err
	}
	if *asJSON {
		return json.NewEncoder(stdout).Encode(cs)
	}
	fmt.Fprintf(stdout, "version %d\n", m.Version)
	for _, f := range cs.Fields {
		printField(stdout, f, 1)
	}
	for k, v := range cs.Metadata {
		fmt.Fprintf(stdout, "metadata %s = %s\n", k, v)
	}
	return nil
}

func printField(w io.Writer, f arrowjson.Field, depth int) {
	null := "not null"
	if f.Nullable {
		null = "nullable"
	}
	fmt.Fprintf(w, "%s%s: %s %s\n", strings.Repeat("  ", depth), f.Name, f.Type, null)
	for k, v := range f.Metadata {
		fmt.Fprintf(w, "%s  (metadata %s = %s)\n", strings.Repeat("  ", depth), k, v)
	}
	for _, c := range f.Children {
		printField(w, c, depth+1)
	}
}

// changesJSON is the output of `mvd table changes --json`.
type changesJSON struct {
	From     uint64   `json:"from"`
	To       uint64   `json:"to"`
	Inserted []uint64 `json:"inserted"`
	Updated  []uint64 `json:"updated"`
	Deleted  []uint64 `json:"deleted"`
}

func tableChanges(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("table changes", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print one JSON object")
	from := fs.Uint64("from", 0, "older version (required)")
	to := fs.Uint64("to", 0, "newer version (required)")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if !set["from"] || !set["to"] {
		return usagef("table changes needs --from N and --to M")
	}
	if *from > *to {
		return usagef("--from %d is after --to %d", *from, *to)
	}
	t, err := openTable(pos, "table changes")
	if err != nil {
		return err
	}
	cs, err := t.Changes(context.Background(), *from, *to)
	if err != nil {
		return err
	}
	out := changesJSON{From: cs.From, To: cs.To, Inserted: cs.Inserted.ToArray(), Updated: cs.Updated.ToArray(), Deleted: cs.Deleted.ToArray()}
	if *asJSON {
		return json.NewEncoder(stdout).Encode(out)
	}
	fmt.Fprintf(stdout, "changes from version %d to %d: %d inserted, %d updated, %d deleted\n",
		out.From, out.To, len(out.Inserted), len(out.Updated), len(out.Deleted))
	for _, part := range []struct {
		name string
		ids  []uint64
	}{{"inserted", out.Inserted}, {"updated", out.Updated}, {"deleted", out.Deleted}} {
		if len(part.ids) > 0 {
			fmt.Fprintf(stdout, "%s: %s\n", part.name, idRanges(part.ids))
		}
	}
	return nil
}

// idRanges prints sorted ids compactly as "1-5, 9, 12-13".
func idRanges(ids []uint64) string {
	var b strings.Builder
	for i := 0; i < len(ids); {
		j := i
		for j+1 < len(ids) && ids[j+1] == ids[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		if j == i {
			fmt.Fprintf(&b, "%d", ids[i])
		} else {
			fmt.Fprintf(&b, "%d-%d", ids[i], ids[j])
		}
		i = j + 1
	}
	return b.String()
}
