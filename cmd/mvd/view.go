package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/mvd-project/mvd/checkpoint"
	"github.com/mvd-project/mvd/control"
	"github.com/mvd-project/mvd/control/client"
	"github.com/mvd-project/mvd/control/httpapi"
	"github.com/mvd-project/mvd/matview"
)

// newViewCmd is the `mvd view …` group: materialized views of a database
// directory, through package matview.
func newViewCmd(stdout, stderr io.Writer) *cobra.Command {
	return newGroupCmd("view", "create, refresh, show, list and drop materialized views",
		`The view commands manage the materialized views of one database directory
(--db DIR; table NAME lives at DIR/NAME.lance, as in LanceDB). A view is an
ordinary Lance table defined by a query over one source table; LanceDB 0.39
opens, reads and refreshes views made by mvd, and mvd adopts views made by
LanceDB.

Exit status 3 means a refresh lost to a concurrent refresh of the same view
(mvd's or LanceDB's); nothing was written and retrying may succeed.`,
		newViewCreateCmd(stdout, stderr),
		newViewRefreshCmd(stdout, stderr),
		newViewShowCmd(stdout),
		newViewListCmd(stdout, stderr),
		newViewDropCmd(stdout),
		newViewAlterCmd(stdout),
		newViewOptimizeCmd(stdout),
	)
}

// dbFlag adds the required --db flag.
func dbFlag(cmd *cobra.Command, p *string) {
	cmd.Flags().StringVar(p, "db", "", "the database `DIR` or s3://BUCKET/PREFIX (table NAME lives at DIR/NAME.lance); required")
	addStorageOptionFlag(cmd)
}

// openDB opens --db, refusing a missing flag as a usage mistake.
func openDB(cmd *cobra.Command, dir string) (*matview.DB, error) {
	if !cmd.Flags().Changed("db") {
		return nil, usagef("%s needs --db DIR", commandName(cmd))
	}
	so, err := storageOptions(cmd)
	if err != nil {
		return nil, err
	}
	return matview.OpenWith(dir, matview.Options{StorageOptions: so})
}

func oneName(cmd *cobra.Command, args []string) error {
	return exactArgs(1, "exactly one view NAME")(cmd, args)
}

// writeJSON prints v as one JSON line, without HTML escaping (SQL holds
// '<' and '>', which LanceDB's JSON keeps as they are).
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// writeResultJSON prints a refresh's result as writeJSON does.
func writeResultJSON(w io.Writer, r *matview.Result) error {
	_, err := w.Write(append(r.AppendJSON(make([]byte, 0, 96)), '\n'))
	return err
}

func newViewCreateCmd(stdout, stderr io.Writer) *cobra.Command {
	var dir, source, sel, where string
	var limit int64 = -1
	var asJSON, compatible bool
	var policy *policyFlags
	var retention *retentionFlags
	var compaction *compactFlags
	cmd := &cobra.Command{
		Use:   "create NAME --db DIR --source SRC",
		Short: "create a materialized view over a table",
		Long: `Create makes view NAME over table SRC and commits it empty, exactly as
LanceDB's createMaterializedView does (the same mv.definition, schema and
validations). Refresh it to fill it.

--select is a SQL select list: a bare column name (plain or backtick-quoted)
becomes the backtick-quoted projection LanceDB records; any other item is
"expression AS alias". Without it the view has every source column.`,
		Example: "  mvd view create --db data adults --source people --select \"name, upper(name) AS shout\" --where \"age >= 18\"\n" +
			"  mvd view create --db data top --source events --where \"amount > 50\" --limit 1000",
		Args: oneName,
		RunE: func(cmd *cobra.Command, args []string) error {
			if !cmd.Flags().Changed("db") {
				return usagef("%s needs --db DIR", commandName(cmd))
			}
			if !cmd.Flags().Changed("source") {
				return usagef("view create needs --source SRC")
			}
			req := httpapi.CreateRequest{Name: args[0], Source: source, Select: sel, LanceDBCompatible: compatible, PolicyChange: policy.change(cmd)}
			retention.addTo(cmd, &req.PolicyChange)
			compaction.addTo(cmd, &req.PolicyChange)
			if cmd.Flags().Changed("where") {
				req.Where = &where
			}
			if limit >= 0 {
				n := uint64(limit)
				req.Limit = &n
			}
			var n matview.NodeDefinition
			var notes []string
			err := viaDaemonOr(cmd, dir, func(c *client.Client) error {
				h, err := c.DoHeader(cmd.Context(), http.MethodPost, "/v1/views", req, &n)
				notes = h.Values(httpapi.NoteHeader)
				return err
			}, func(db *matview.DB) (err error) {
				n, notes, err = httpapi.CreateView(cmd.Context(), db, req)
				return err
			})
			if err != nil {
				return err
			}
			for _, l := range notes {
				fmt.Fprintf(stderr, "mvd: %s\n", l)
			}
			if asJSON {
				return writeJSON(stdout, n)
			}
			_, err = fmt.Fprintf(stdout, "created view %s over %s: %s, version %d; refresh it to fill it\n",
				args[0], source, counted(len(n.Projections), "column"), n.Version)
			return err
		},
	}
	dbFlag(cmd, &dir)
	cmd.Flags().StringVar(&source, "source", "", "the source `SRC` table (in the same database); required")
	cmd.Flags().StringVar(&sel, "select", "", "SQL select `list`, e.g. \"id, upper(name) AS shout\" (default: every source column)")
	cmd.Flags().StringVar(&where, "where", "", "SQL filter: the view holds the rows where it is TRUE")
	cmd.Flags().Var(limitValue{&limit}, "limit", "hold at most N rows (default: no cap)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the view's definition as LanceDB's definition() returns it (plus \"warnings\", if any)")
	cmd.Flags().BoolVar(&compatible, "lancedb-compatible", false, "refuse SQL that LanceDB 0.39 cannot plan (CASE, CEIL, TRIM(…), …) instead of warning")
	adminTokenFlag(cmd)
	policy = addPolicyFlags(cmd)
	retention = addRetentionFlags(cmd, "(version cleanup by mvd serve and view optimize)")
	compaction = addCompactFlags(cmd)
	return cmd
}

func newViewRefreshCmd(stdout, stderr io.Writer) *cobra.Command {
	var dir string
	var full, cascade, asJSON, async bool
	var bf *budgetFlags
	var sourceVersion uint64
	cmd := &cobra.Command{
		Use:   "refresh NAME --db DIR",
		Short: "bring a view up to date with its source",
		Long: `Refresh brings view NAME to its definition evaluated on the source's latest
version (or --source-version), in one Lance commit that holds the view's
rows and its watermark. It reports the mode as LanceDB does: incremental
(at the cost of the change), rebuild (first refresh, --full, an overwrite
or restore of the source, a type change of a read column, a watermark that
no longer exists, a recreated source, a foreign write to the view), or
no_op (nothing changed; nothing is committed).

With --cascade, views upstream of NAME (its source, if a view, and so on)
are refreshed first, in dependency order. Exit status 3: a concurrent
refresh won; nothing was written.

With --async the refresh is submitted to the running mvd serve as a job
(run in turn with the view's automatic refreshes) and {"job_id":"…"} is
printed at once; mvd job wait prints its result. Without a running daemon
--async exits 1 and nothing is committed.

--cpu-millis, --memory-bytes, --gpu-count and --gpu-class cap what the
refresh may use, with LanceDB Enterprise's rules (CPU or memory needs all
three of --cpu-millis, --memory-bytes and --gpu-count; no negative value;
no GPU). The caps are enforced: at most ceil(cpu-millis/1000) workers run
at once (other views keep the whole process), and batches are sized to
memory-bytes; a refresh that cannot fit fails saying how much it needs and
commits nothing. A refused budget exits 2 and changes nothing.`,
		Example: "  mvd view refresh --db data adults\n  mvd view refresh --db data adults --json\n  mvd view refresh --db data downstream --cascade",
		Args:    oneName,
		RunE: func(cmd *cobra.Command, args []string) error {
			// A refused budget changes nothing: it is checked before
			// the database is opened.
			b, err := bf.merge(cmd, matview.Budget{})
			if err != nil {
				return err
			}
			o := matview.RefreshOptions{Full: full, Budget: b}
			if cmd.Flags().Changed("source-version") {
				o.SourceVersion = &sourceVersion
			}
			if async {
				return viewRefreshAsync(cmd, dir, args[0], o, cascade, stdout)
			}
			return viaDaemonOr(cmd, dir, func(c *client.Client) error {
				return remoteRefresh(cmd.Context(), c, args[0], o, cascade, asJSON, stdout, stderr)
			}, func(db *matview.DB) error {
				return viewRefresh(cmd.Context(), db, args[0], o, cascade, asJSON, stdout, stderr)
			})
		},
	}
	dbFlag(cmd, &dir)
	asyncFlags(cmd, &async)
	cmd.Flags().BoolVar(&full, "full", false, "rebuild the view from scratch")
	versionFlag(cmd.Flags(), &sourceVersion, "source-version", "the source version to reflect (default: the latest); older than the view's: rebuild to it")
	cmd.Flags().BoolVar(&cascade, "cascade", false, "refresh the views upstream of NAME first, in dependency order")
	bf = addBudgetFlags(cmd, "budget of this refresh")
	cmd.Flags().BoolVar(&asJSON, "json", false, `print one line {"mode","rows_written","source_version","version"} (and "warnings" when any)`)
	return cmd
}

func viewRefresh(ctx context.Context, db *matview.DB, name string, o matview.RefreshOptions, cascade, asJSON bool, stdout, stderr io.Writer) error {
	defer db.Close()
	var r *matview.Result
	if cascade {
		steps, err := db.RefreshCascade(ctx, name, o)
		// "mvd: " lines are errors: an upstream refresh is reported as a
		// result (on stdout, or stderr beside --json's one line).
		progress := stdout
		if asJSON {
			progress = stderr
		}
		for _, s := range steps {
			if s.View != name {
				fmt.Fprintf(progress, "refreshed upstream view %s: %s\n", s.View, describeResult(s.Result))
				printWarnings(stderr, s.Result.Warnings)
			}
		}
		if err != nil {
			return err
		}
		r = steps[len(steps)-1].Result
	} else {
		v, err := db.OpenView(ctx, name)
		if err != nil {
			return err
		}
		if r, err = v.Refresh(ctx, o); err != nil {
			return err
		}
	}
	// The refresh is reported once it is durable: closing waits for what
	// it left to the background (a watermark-only commit's name sync).
	if err := db.Close(); err != nil {
		return err
	}
	r.Warnings = append(r.Warnings, db.Warnings()...)
	printWarnings(stderr, r.Warnings)
	if asJSON {
		return writeResultJSON(stdout, r)
	}
	_, err := fmt.Fprintf(stdout, "refreshed %s: %s\n", name, describeResult(r))
	return err
}

// printWarnings prints one "mvd: warning: …" line per warning: what went
// wrong beside a command that succeeded.
func printWarnings(stderr io.Writer, warnings []string) {
	for _, w := range warnings {
		fmt.Fprintf(stderr, "mvd: warning: %s\n", w)
	}
}

// describeResult is a refresh's result in words (control's, as mvd sql
// prints it).
func describeResult(r *matview.Result) string { return control.DescribeResult(r) }

func newViewShowCmd(stdout io.Writer) *cobra.Command {
	var dir string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "show NAME --db DIR",
		Short: "show a view's definition and watermark",
		Long: `Show prints view NAME's definition (source, projections, filter, limit,
inputs) and its watermark: the source version it reflects, that version's
commit time, when it was refreshed, and the view version of that refresh.
Then its recent refreshes as mvd serve recorded them in DIR/.mvd/state
(asked of the running daemon, or read from the store when none runs).`,
		Example: "  mvd view show --db data adults --json",
		Args:    oneName,
		RunE: func(cmd *cobra.Command, args []string) error {
			var out httpapi.ShowJSON
			err := viaDaemonOr(cmd, dir, func(c *client.Client) error {
				h, err := c.DoHeader(cmd.Context(), http.MethodGet, "/v1/views/"+url.PathEscape(args[0]), nil, &out)
				printNotes(cmd.ErrOrStderr(), h, httpapi.NoteHeader, "mvd: ")
				return err
			}, func(db *matview.DB) error {
				v, err := db.OpenView(cmd.Context(), args[0])
				if err != nil {
					return err
				}
				info, err := v.Info(cmd.Context())
				if err != nil {
					return err
				}
				out.NodeDefinition = info.Node()
				if out.Storage, err = v.Storage(cmd.Context()); err != nil {
					return err
				}
				var herr error
				out.History, herr = historyFrom(cmd.Context(), nil, false, dir, args[0], historyShown)
				if herr != nil {
					fmt.Fprintf(cmd.ErrOrStderr(), "mvd: warning: refresh history unavailable: %s\n", oneLine(herr.Error()))
				}
				return nil
			})
			if err != nil {
				return err
			}
			if out.History == nil {
				out.History = []checkpoint.RefreshRecord{}
			}
			if asJSON {
				return writeJSON(stdout, out)
			}
			if err := printInfo(stdout, args[0], out.NodeDefinition); err != nil {
				return err
			}
			if _, err := fmt.Fprintf(stdout, "storage:  %s, %s, %s on disk\n", counted(out.Storage.Fragments, "fragment"), counted(out.Storage.Versions, "version"), counted(out.Storage.Bytes, "byte")); err != nil {
				return err
			}
			return printHistory(stdout, out.History)
		},
	}
	dbFlag(cmd, &dir)
	adminTokenFlag(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print LanceDB's definition() object plus \"watermark\", \"version\", \"rows\", \"storage\" (fragments, versions, bytes on disk) and \"history\" (recent refreshes, newest first)")
	return cmd
}

func printInfo(w io.Writer, name string, n matview.NodeDefinition) error {
	fmt.Fprintf(w, "view:     %s\nsource:   %s\n", name, n.SourceTable)
	for _, p := range n.Projections {
		fmt.Fprintf(w, "column:   %s = %s\n", p[0], p[1])
	}
	if n.Filter != nil {
		fmt.Fprintf(w, "where:    %s\n", *n.Filter)
	}
	if n.Limit != nil {
		fmt.Fprintf(w, "limit:    %d\n", *n.Limit)
	}
	fmt.Fprintf(w, "version:  %d (%s)\n", n.Version, counted(n.Rows, "row"))
	if wm := n.Watermark; wm != nil {
		_, err := fmt.Fprintf(w, "refreshed: source version %d, view version %d, at %s\n", wm.SourceVersion, wm.ViewVersion,
			time.UnixMilli(wm.RefreshedAtMs).UTC().Format(time.RFC3339Nano))
		return err
	}
	_, err := fmt.Fprintln(w, "refreshed: never")
	return err
}

func newViewListCmd(stdout, stderr io.Writer) *cobra.Command {
	var dir string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list --db DIR",
		Short: "list the views of a database",
		Long: `List prints the names of the database's views, sorted. A view that
cannot be read (its definition or its newest manifest) is listed too, its
problem reported on stderr (and, with --json, as {"name","error"}); drop
removes it.`,
		Example: "  mvd view list --db data --json",
		Args:    exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			var items []json.RawMessage
			err := viaDaemonOr(cmd, dir, func(c *client.Client) error {
				return c.Do(cmd.Context(), http.MethodGet, "/v1/views", nil, &items)
			}, func(db *matview.DB) error {
				vs, err := db.ListViews(cmd.Context())
				if err != nil {
					return err
				}
				for _, it := range httpapi.ListItems(vs, oneLine) {
					b, err := json.Marshal(it)
					if err != nil {
						return err
					}
					items = append(items, b)
				}
				return nil
			})
			if err != nil {
				return err
			}
			return printViews(items, asJSON, stdout, stderr)
		},
	}
	dbFlag(cmd, &dir)
	cmd.Flags().BoolVar(&asJSON, "json", false, `print one JSON array of names ({"name","error"} for a view that cannot be read)`)
	adminTokenFlag(cmd)
	return cmd
}

// printViews prints a listing: one name a line, or with asJSON one
// array of names, where a view that cannot be read is an object
// {"name","error"}; its error also goes to stderr as an "mvd: …" line.
func printViews(items []json.RawMessage, asJSON bool, stdout, stderr io.Writer) error {
	names := make([]string, len(items))
	for i, it := range items {
		var b httpapi.BrokenView
		if err := json.Unmarshal(it, &names[i]); err == nil {
			continue
		}
		if err := json.Unmarshal(it, &b); err != nil {
			return fmt.Errorf("view listing: %w", err)
		}
		names[i] = b.Name
		fmt.Fprintf(stderr, "mvd: %s\n", b.Error)
	}
	if asJSON {
		if items == nil {
			items = []json.RawMessage{}
		}
		return writeJSON(stdout, items)
	}
	for _, n := range names {
		if _, err := fmt.Fprintln(stdout, n); err != nil {
			return err
		}
	}
	return nil
}

func newViewDropCmd(stdout io.Writer) *cobra.Command {
	var dir string
	var ifExists bool
	cmd := &cobra.Command{
		Use:   "drop NAME --db DIR",
		Short: "drop a materialized view",
		Long:  `Drop removes view NAME (its table directory). A table that is not a view is refused.`,
		Args:  oneName,
		RunE: func(cmd *cobra.Command, args []string) error {
			return viaDaemonOr(cmd, dir, func(c *client.Client) error {
				return c.Do(cmd.Context(), http.MethodDelete, "/v1/views/"+url.PathEscape(args[0])+"?if_exists="+strconv.FormatBool(ifExists), nil, nil)
			}, func(db *matview.DB) error {
				err := db.DropView(cmd.Context(), args[0])
				if ifExists && errors.Is(err, matview.ErrNotFound) {
					return nil
				}
				return err
			})
		},
	}
	dbFlag(cmd, &dir)
	cmd.Flags().BoolVar(&ifExists, "if-exists", false, "succeed when there is no such view")
	adminTokenFlag(cmd)
	return cmd
}
