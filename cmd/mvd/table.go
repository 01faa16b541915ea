package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/mvd-project/mvd/arrowjson"
)

// newTableCmd is the `mvd table …` group: commands that read (and copy)
// one Lance table without any view.
func newTableCmd(stdout, stderr io.Writer) *cobra.Command {
	return newGroupCmd("table", "inspect, scan and copy Lance tables",
		`The table commands work on one Lance table directory (as LanceDB writes it:
PATH/_versions, PATH/data, …). They read the table without changing it,
except copy, which writes a new table.

Versions are numbered from 1; commands that take --version read the latest
version when it is left out.

PATH may be s3://BUCKET/KEY (every command; copy either way between local disk
and object storage), with the store's settings from the AWS_* environment
and the --storage-option flags.`,
		withStorageOption(newTableVersionsCmd(stdout)),
		withStorageOption(newTableSchemaCmd(stdout)),
		withStorageOption(newTableChangesCmd(stdout)),
		withStorageOption(newTableScanCmd(stdout)),
		withStorageOption(newTableCopyCmd(stdout, stderr)),
	)
}

func withStorageOption(cmd *cobra.Command) *cobra.Command {
	addStorageOptionFlag(cmd)
	return cmd
}

// onePath checks for the single PATH argument of a table command.
func onePath(cmd *cobra.Command, args []string) error {
	return exactArgs(1, "exactly one table path")(cmd, args)
}

// versionJSON is one line of `mvd table versions --json`.
type versionJSON struct {
	Version   uint64 `json:"version"`
	Timestamp string `json:"timestamp"`
	Operation string `json:"operation"`
	Rows      uint64 `json:"rows"`
}

func newTableVersionsCmd(stdout io.Writer) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "versions PATH",
		Short: "list a table's versions",
		Long: `Versions lists every version of the table: its number, commit timestamp,
operation (the Lance transaction: overwrite, append, update, delete,
reserve_fragments, rewrite, merge, …) and live row count.`,
		Example: `  mvd table versions data/people.lance
  mvd table versions data/people.lance --json`,
		Args: onePath,
		RunE: func(cmd *cobra.Command, args []string) error {
			return tableVersions(tableCtx(cmd), args[0], asJSON, stdout)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, `print one JSON object per version: {"version","timestamp","operation","rows"}`)
	return cmd
}

func tableVersions(ctx context.Context, path string, asJSON bool, stdout io.Writer) error {
	t, err := openTable(ctx, path)
	if err != nil {
		return err
	}
	refs, err := t.Versions(ctx)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(stdout)
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	if !asJSON {
		fmt.Fprintln(tw, "VERSION\tTIMESTAMP\tOPERATION\tROWS")
	}
	for _, ref := range refs {
		m, err := t.Checkout(ctx, ref.Version)
		if err != nil {
			return err
		}
		rows, err := m.CountRows(ctx)
		if err != nil {
			return err
		}
		opName := "unknown"
		tx, err := m.Transaction(ctx)
		if err != nil {
			return err
		}
		if tx != nil {
			opName = string(tx.Operation)
		}
		v := versionJSON{Version: m.Version, Timestamp: m.Timestamp.UTC().Format(time.RFC3339Nano), Operation: opName, Rows: rows}
		if asJSON {
			if err := enc.Encode(v); err != nil {
				return err
			}
			continue
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%d\n", v.Version, v.Timestamp, v.Operation, v.Rows)
	}
	return tw.Flush()
}

func newTableSchemaCmd(stdout io.Writer) *cobra.Command {
	var asJSON bool
	var version uint64
	cmd := &cobra.Command{
		Use:   "schema PATH",
		Short: "show a table's schema",
		Long: `Schema shows the Arrow schema of one version of the table (the latest unless
--version says otherwise): every field with its type and nullability, nested
fields indented, and field and schema metadata.`,
		Example: `  mvd table schema data/people.lance
  mvd table schema data/people.lance --version 3 --json`,
		Args: onePath,
		RunE: func(cmd *cobra.Command, args []string) error {
			return tableSchema(tableCtx(cmd), args[0], version, asJSON, stdout)
		},
	}
	versionFlag(cmd.Flags(), &version, "version", "table version to show, from 1 (default: the latest)")
	cmd.Flags().BoolVar(&asJSON, "json", false, `print one JSON object: {"fields":[{"name","type","nullable","metadata","children"}…],"metadata"}`)
	return cmd
}

func tableSchema(ctx context.Context, path string, version uint64, asJSON bool, stdout io.Writer) error {
	t, err := openTable(ctx, path)
	if err != nil {
		return err
	}
	m, err := t.Checkout(ctx, version)
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
	if asJSON {
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

func newTableChangesCmd(stdout io.Writer) *cobra.Command {
	var asJSON bool
	var from, to uint64
	cmd := &cobra.Command{
		Use:   "changes PATH --from N --to M",
		Short: "row ids inserted, updated and deleted between two versions",
		Long: `Changes prints the row-id change set between versions N and M (any N <= M,
not only adjacent ones): rows inserted (live at M, not at N), deleted (live
at N, not at M) and updated (live at both, last updated after N), exactly as
LanceDB's _rowid and _row_last_updated_at_version define them. It reads
manifests, row-id and version sequences and deletion files only, never a data
file. The table needs stable row ids.`,
		Example: `  mvd table changes data/people.lance --from 3 --to 4
  mvd table changes data/people.lance --from 1 --to 9 --json`,
		Args: onePath,
		RunE: func(cmd *cobra.Command, args []string) error {
			if !cmd.Flags().Changed("from") || !cmd.Flags().Changed("to") {
				return usagef("table changes needs --from N and --to M")
			}
			if from > to {
				return usagef("--from %d is after --to %d", from, to)
			}
			return tableChanges(tableCtx(cmd), args[0], from, to, asJSON, stdout)
		},
	}
	versionFlag(cmd.Flags(), &from, "from", "older version, from 1 (required)")
	versionFlag(cmd.Flags(), &to, "to", "newer version, at least --from (required)")
	cmd.Flags().BoolVar(&asJSON, "json", false, `print one JSON object: {"from","to","inserted":[…],"updated":[…],"deleted":[…]}, row ids ascending`)
	return cmd
}

func tableChanges(ctx context.Context, path string, from, to uint64, asJSON bool, stdout io.Writer) error {
	t, err := openTable(ctx, path)
	if err != nil {
		return err
	}
	cs, err := t.Changes(ctx, from, to)
	if err != nil {
		return err
	}
	out := changesJSON{From: cs.From, To: cs.To, Inserted: cs.Inserted.ToArray(), Updated: cs.Updated.ToArray(), Deleted: cs.Deleted.ToArray()}
	if asJSON {
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
