package main

import (
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/mvd-project/mvd/control"
	"github.com/mvd-project/mvd/control/client"
	"github.com/mvd-project/mvd/control/httpapi"
	"github.com/mvd-project/mvd/matview"
)

// policyFlags are the auto-refresh flags of `mvd view create` and
// `mvd view alter`; the policy is stored in the view's own metadata
// (matview.Policy.Metadata), where every mvd serve reads it.
type policyFlags struct {
	mode                        string
	interval, debounce, target  time.Duration
	modeSet, intervalSet        bool
	debounceSet, targetSet, any bool
}

var policyFlagNames = []string{"auto-refresh", "interval", "debounce", "freshness-target"}

// addPolicyFlags adds --auto-refresh, --interval, --debounce and
// --freshness-target to cmd.
func addPolicyFlags(cmd *cobra.Command) *policyFlags {
	p := &policyFlags{}
	f := cmd.Flags()
	f.StringVar(&p.mode, "auto-refresh", "", "when mvd serve refreshes the view, `MODE` on-commit (default: at each source commit), interval or manual")
	f.DurationVar(&p.interval, "interval", 0, "with --auto-refresh interval: at most one refresh per `DURATION` (e.g. 5s)")
	f.DurationVar(&p.debounce, "debounce", 0, "wait `DURATION` after a commit so a burst shares one refresh (e.g. 20ms; 0 = none)")
	f.DurationVar(&p.target, "freshness-target", 0, "log and count refreshes lagging the source commit by more than `DURATION` (0 = none)")
	return p
}

// read notes which flags were given.
func (p *policyFlags) read(cmd *cobra.Command) {
	f := cmd.Flags()
	p.modeSet, p.intervalSet = f.Changed("auto-refresh"), f.Changed("interval")
	p.debounceSet, p.targetSet = f.Changed("debounce"), f.Changed("freshness-target")
	p.any = p.modeSet || p.intervalSet || p.debounceSet || p.targetSet
}

// change is the policy change the flags given say (package httpapi
// applies it, on this side or in the daemon: one set of rules).
func (p *policyFlags) change(cmd *cobra.Command) httpapi.PolicyChange {
	p.read(cmd)
	var c httpapi.PolicyChange
	if p.modeSet {
		mode := p.mode
		c.AutoRefresh = &mode
	}
	if p.intervalSet {
		c.IntervalSeconds = httpapi.Seconds(p.interval)
	}
	if p.debounceSet {
		c.DebounceMS = httpapi.Millis(p.debounce)
	}
	if p.targetSet {
		c.FreshnessTargetMS = httpapi.Millis(p.target)
	}
	return c
}

// describePolicy is a policy in words, as ALTER MATERIALIZED VIEW says it.
func describePolicy(p matview.Policy) string { return control.DescribePolicy(p) }

// policyFromJSON is the policy an alter's answer describes.
func policyFromJSON(j httpapi.PolicyJSON) (matview.Policy, error) {
	m, err := matview.ParseRefreshMode(j.AutoRefresh)
	if err != nil {
		return matview.Policy{}, fmt.Errorf("the daemon's answer: %w", err)
	}
	d := func(f float64, unit time.Duration) time.Duration { return time.Duration(math.Round(f * float64(unit))) }
	return matview.Policy{Mode: m, Interval: d(j.IntervalSeconds, time.Second), Debounce: d(j.DebounceMS, time.Millisecond),
		FreshnessTarget: d(j.FreshnessTargetMS, time.Millisecond)}, nil
}

// viewAlterFlags are the flags of `mvd view alter`.
type viewAlterFlags struct {
	dir    string
	asJSON bool
	pf     *policyFlags
	rf     *retentionFlags
	cf     *compactFlags
	bf     *budgetFlags
}

func newViewAlterCmd(stdout io.Writer) *cobra.Command {
	var f viewAlterFlags
	cmd := &cobra.Command{
		Use:   "alter NAME --db DIR [--auto-refresh on-commit|interval|manual] [--interval D] [--debounce D] [--freshness-target D] [--keep-versions-for D] [--keep-versions K] [--cpu-millis N --memory-bytes N --gpu-count N]",
		Short: "change a view's auto-refresh policy and version retention",
		Long: `Alter changes view NAME's auto-refresh policy: when mvd serve refreshes it.

  on-commit  at each source commit (the default, also for views LanceDB made)
  interval   at most once per --interval (LanceDB Enterprise's
             auto_refresh_interval_seconds); commits in between are coalesced
  manual     never by itself: only mvd view refresh (or LanceDB's refresh)

--debounce waits that long after a commit before refreshing, so the commits
of a burst share one refresh; --freshness-target makes refreshes that lag the
source commit by more than it visible in logs and in the metric
mvd_view_freshness_target_missed. A duration of 0 removes the setting. Flags
not given keep their current value.

The policy lives in the view's own schema metadata (mv.auto_refresh, …),
written in one metadata-only commit that keeps the view's watermark: no rows
change, and neither mvd nor LanceDB refreshes the view because of it. A
running mvd serve picks the new policy up from that commit.

--keep-versions-for and --keep-versions set how many old versions of the view
mvd serve's version cleanup (and mvd view optimize) keeps: the versions of the
last DURATION, and at least the last K (default 1h and 10; stored as
mv.keep_versions_for_ms and mv.keep_versions).

--cpu-millis, --memory-bytes, --gpu-count and --gpu-class set the view's
default refresh budget (mv.cpu_millis, mv.memory_bytes, mv.gpu_count,
mv.gpu_class), which mvd serve applies to the view's refreshes that give
none of their own; the rules are those of mvd view refresh's flags,
checked on the budget that results, and a refused one exits 2 and changes
nothing.`,
		Example: "  mvd view alter --db data daily --auto-refresh interval --interval 5s\n" +
			"  mvd view alter --db data daily --debounce 20ms --freshness-target 1s\n" +
			"  mvd view alter --db data daily --auto-refresh manual\n" +
			"  mvd view alter --db data daily --keep-versions-for 10m --keep-versions 5",
		Args: oneName,
		RunE: func(cmd *cobra.Command, args []string) error {
			return viewAlter(cmd, args[0], f, stdout)
		},
	}
	addViewAlterFlags(cmd, &f)
	return cmd
}

// addViewAlterFlags adds the flags of `mvd view alter` to cmd, bound to f.
func addViewAlterFlags(cmd *cobra.Command, f *viewAlterFlags) {
	dbFlag(cmd, &f.dir)
	adminTokenFlag(cmd)
	f.pf = addPolicyFlags(cmd)
	f.rf = addRetentionFlags(cmd, "(version cleanup by mvd serve and view optimize)")
	f.cf = addCompactFlags(cmd)
	f.bf = addBudgetFlags(cmd, "default budget of the daemon's refreshes")
	cmd.Flags().BoolVar(&f.asJSON, "json", false, `print {"view","auto_refresh","interval_seconds","debounce_ms","freshness_target_ms","version","keep_versions_for_ms","keep_versions","compact_small_fragments","compact_deleted_percent","budget"}`)
}

// viewAlter applies the change the flags given say to view name, through
// a running daemon when there is one, else on the database opened here,
// and prints the view's settings that result.
func viewAlter(cmd *cobra.Command, name string, f viewAlterFlags, stdout io.Writer) error {
	if !cmd.Flags().Changed("db") {
		return usagef("%s needs --db DIR", commandName(cmd))
	}
	change := f.pf.change(cmd)
	f.rf.addTo(cmd, &change)
	f.cf.addTo(cmd, &change)
	change.Budget = budgetChange(cmd, f.bf)
	if !change.Any() {
		names := slices.Concat(policyFlagNames, retentionFlagNames, compactFlagNames, budgetFlagNames)
		return usagef("view alter needs at least one of --%s", strings.Join(names, ", --"))
	}
	var out httpapi.PolicyJSON
	err := viaDaemonOr(cmd, f.dir, func(c *client.Client) error {
		return c.Do(cmd.Context(), http.MethodPatch, "/v1/views/"+url.PathEscape(name), change, &out)
	}, func(db *matview.DB) (err error) {
		out, err = httpapi.AlterPolicy(cmd.Context(), db, name, change)
		return err
	})
	if err != nil {
		return err
	}
	if f.asJSON {
		return writeJSON(stdout, out)
	}
	return printViewAltered(stdout, name, change, out)
}

// printViewAltered says in words what an alter of view name changed:
// the settings of the kinds change touched, as out gives them.
func printViewAltered(w io.Writer, name string, change httpapi.PolicyChange, out httpapi.PolicyJSON) error {
	pol, err := policyFromJSON(out)
	if err != nil {
		return err
	}
	ret := matview.Retention{KeepFor: time.Duration(math.Round(out.KeepVersionsForMS * float64(time.Millisecond))), Keep: out.KeepVersions}
	cp := matview.CompactPolicy{SmallFragments: out.CompactSmallFragments, DeletedPercent: out.CompactDeletedPercent}
	var parts []string
	if change.AnyPolicy() {
		parts = append(parts, "auto-refresh "+describePolicy(pol))
	}
	if change.AnyRetention() {
		parts = append(parts, describeRetention(ret))
	}
	if change.AnyCompact() {
		parts = append(parts, describeCompact(cp))
	}
	if out.Budget != nil {
		parts = append(parts, "default refresh budget "+describeBudget(*out.Budget))
	}
	_, err = fmt.Fprintf(w, "altered view %s: %s (view version %d)\n", name, strings.Join(parts, "; "), out.Version)
	return err
}
