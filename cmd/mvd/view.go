package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/mvd-project/mvd/checkpoint"
	"github.com/mvd-project/mvd/matview"
	"github.com/mvd-project/mvd/plan"
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
	cmd.Flags().StringVar(p, "db", "", "the database `DIR` (table NAME lives at DIR/NAME.lance); required")
}

// openDB opens --db, refusing a missing flag as a usage mistake.
func openDB(cmd *cobra.Command, dir string) (*matview.DB, error) {
	if !cmd.Flags().Changed("db") {
		return nil, usagef("%s needs --db DIR", commandName(cmd))
	}
	return matview.Open(dir)
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
			db, err := openDB(cmd, dir)
			if err != nil {
				return err
			}
			if !cmd.Flags().Changed("source") {
				return usagef("view create needs --source SRC")
			}
			opts, err := policy.createOptions(cmd, args[0])
			if err != nil {
				return err
			}
			if ret, err := retention.merge(cmd, matview.DefaultRetention); err != nil {
				return err
			} else if retention.any {
				opts = append(opts, matview.WithMetadata(ret.Metadata()))
			}
			if cp, err := compaction.merge(cmd, matview.DefaultCompactPolicy()); err != nil {
				return err
			} else if compaction.any {
				opts = append(opts, matview.WithMetadata(cp.Metadata()))
			}
			if cmd.Flags().Changed("where") && strings.TrimSpace(where) == "" {
				// LanceDB refuses an empty filter; "" must not mean "no
				// filter" when it was given.
				return plan.EmptyFilterError(where)
			}
			if compatible {
				opts = append(opts, matview.LanceDBCompatible())
			}
			d := matview.Definition{Where: where}
			if sel != "" {
				// A bad select list is a bad definition, as a bad --where
				// is: exit 1, not a usage mistake.
				if d.Select, err = plan.ParseSelect(sel); err != nil {
					return fmt.Errorf("--select: %w", err)
				}
			}
			if limit >= 0 {
				n := uint64(limit)
				d.Limit = &n
			}
			v, err := db.CreateView(cmd.Context(), args[0], source, d, opts...)
			if err != nil {
				return err
			}
			info, err := v.Info(cmd.Context())
			if err != nil {
				return err
			}
			n := info.Node()
			n.Warnings = warnLanceDB(stderr, args[0], info.Definition)
			if asJSON {
				return writeJSON(stdout, n)
			}
			_, err = fmt.Fprintf(stdout, "created view %s over %s: %d columns, version %d; refresh it to fill it\n",
				args[0], source, len(info.Definition.Projections), info.Version)
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
	policy = addPolicyFlags(cmd)
	retention = addRetentionFlags(cmd, "(version cleanup by mvd serve and view optimize)")
	compaction = addCompactFlags(cmd)
	return cmd
}

// warnLanceDB prints one "mvd: warning:" line when LanceDB 0.39 cannot
// plan the view's definition (its refresh of the view would fail), and
// returns the constructs for --json's "warnings".
func warnLanceDB(stderr io.Writer, name string, d *plan.Definition) []string {
	list := plan.LanceDBUnsupported(*d)
	if len(list) == 0 {
		return nil
	}
	fmt.Fprintf(stderr, "mvd: warning: LanceDB 0.39 cannot refresh view %s: %s not supported SQL in lance (mvd refreshes it; --lancedb-compatible refuses such definitions)\n",
		name, strings.Join(list, ", "))
	out := make([]string, len(list))
	for i, c := range list {
		out[i] = "LanceDB 0.39 cannot plan " + c + ": not supported SQL in lance"
	}
	return out
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
			db, err := openDB(cmd, dir)
			if err != nil {
				return err
			}
			o := matview.RefreshOptions{Full: full, Budget: b}
			if cmd.Flags().Changed("source-version") {
				o.SourceVersion = &sourceVersion
			}
			if async {
				_ = db.Close() // the daemon refreshes
				return viewRefreshAsync(cmd, dir, args[0], o, cascade, stdout)
			}
			return viewRefresh(cmd.Context(), db, args[0], o, cascade, asJSON, stdout, stderr)
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

func describeResult(r *matview.Result) string {
	s := fmt.Sprintf("%s, %d rows written, source version %d, view version %d", r.Mode, r.RowsWritten, r.SourceVersion, r.Version)
	if r.Reason != "" {
		s += " (" + r.Reason + ")"
	}
	return s
}

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
			db, err := openDB(cmd, dir)
			if err != nil {
				return err
			}
			v, err := db.OpenView(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			info, err := v.Info(cmd.Context())
			if err != nil {
				return err
			}
			hist, herr := viewHistory(cmd, dir, args[0])
			if herr != nil {
				fmt.Fprintf(cmd.ErrOrStderr(), "mvd: warning: refresh history unavailable: %s\n", oneLine(herr.Error()))
			}
			if hist == nil {
				hist = []checkpoint.RefreshRecord{}
			}
			st, err := v.Storage(cmd.Context())
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(stdout, struct {
					matview.NodeDefinition
					Storage matview.Storage            `json:"storage"`
					History []checkpoint.RefreshRecord `json:"history"`
				}{info.Node(), st, hist})
			}
			if err := printInfo(stdout, info); err != nil {
				return err
			}
			if _, err := fmt.Fprintf(stdout, "storage:  %d fragments, %d versions, %d bytes on disk\n", st.Fragments, st.Versions, st.Bytes); err != nil {
				return err
			}
			return printHistory(stdout, hist)
		},
	}
	dbFlag(cmd, &dir)
	adminTokenFlag(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print LanceDB's definition() object plus \"watermark\", \"version\", \"rows\", \"storage\" (fragments, versions, bytes on disk) and \"history\" (recent refreshes, newest first)")
	return cmd
}

func printInfo(w io.Writer, i *matview.Info) error {
	d := i.Definition
	fmt.Fprintf(w, "view:     %s\nsource:   %s\n", i.Name, d.SourceTable)
	for _, p := range d.Projections {
		fmt.Fprintf(w, "column:   %s = %s\n", p.Output, p.Expression)
	}
	if d.Filter != "" {
		fmt.Fprintf(w, "where:    %s\n", d.Filter)
	}
	if d.Limit != nil {
		fmt.Fprintf(w, "limit:    %d\n", *d.Limit)
	}
	fmt.Fprintf(w, "version:  %d (%d rows)\n", i.Version, i.Rows)
	if wm := i.Watermark; wm.Valid {
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
			db, err := openDB(cmd, dir)
			if err != nil {
				return err
			}
			vs, err := db.ListViews(cmd.Context())
			if err != nil {
				return err
			}
			return printViews(vs, asJSON, stdout, stderr)
		},
	}
	dbFlag(cmd, &dir)
	cmd.Flags().BoolVar(&asJSON, "json", false, `print one JSON array of names ({"name","error"} for a view that cannot be read)`)
	return cmd
}

// printViews prints a listing: one name a line, or with asJSON one
// array of names, where a view that cannot be read is an object
// {"name","error"}; its error also goes to stderr as an "mvd: …" line.
func printViews(vs []matview.ViewEntry, asJSON bool, stdout, stderr io.Writer) error {
	type broken struct {
		Name  string `json:"name"`
		Error string `json:"error"`
	}
	items := []any{}
	for _, v := range vs {
		if v.Err == nil {
			items = append(items, v.Name)
			continue
		}
		msg := oneLine(v.Err.Error())
		fmt.Fprintf(stderr, "mvd: %s\n", msg)
		items = append(items, broken{v.Name, msg})
	}
	if asJSON {
		return writeJSON(stdout, items)
	}
	for _, v := range vs {
		if _, err := fmt.Fprintln(stdout, v.Name); err != nil {
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
			db, err := openDB(cmd, dir)
			if err != nil {
				return err
			}
			err = db.DropView(cmd.Context(), args[0])
			if ifExists && errors.Is(err, matview.ErrNotFound) {
				return nil
			}
			return err
		},
	}
	dbFlag(cmd, &dir)
	cmd.Flags().BoolVar(&ifExists, "if-exists", false, "succeed when there is no such view")
	return cmd
}
