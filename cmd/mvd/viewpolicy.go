package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

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

// merge applies the flags given to base (the view's current policy, or
// the default for a new view) and validates the result.
func (p *policyFlags) merge(cmd *cobra.Command, view string, base matview.Policy) (matview.Policy, error) {
	p.read(cmd)
	out := base
	if p.modeSet {
		m, err := parsePolicyMode(p.mode)
		if err != nil {
			return out, err
		}
		out.Mode = m
		if m != matview.Interval {
			out.Interval = 0
		}
	}
	for _, d := range []struct {
		name string
		set  bool
		v    time.Duration
	}{{"interval", p.intervalSet, p.interval}, {"debounce", p.debounceSet, p.debounce}, {"freshness-target", p.targetSet, p.target}} {
		if d.set && d.v < 0 {
			return out, usagef("--%s must not be negative, got %s", d.name, d.v)
		}
	}
	if p.intervalSet {
		if out.Mode != matview.Interval {
			if p.modeSet {
				return out, usagef("--interval applies only to --auto-refresh interval, not %s", out.Mode)
			}
			return out, usagef("--interval applies only to --auto-refresh interval (view %s is %s); add --auto-refresh interval", view, out.Mode)
		}
		out.Interval = p.interval
	}
	if out.Mode == matview.Interval && out.Interval <= 0 {
		return out, usagef("--auto-refresh interval needs --interval DURATION > 0 (e.g. --interval 5s)")
	}
	if p.debounceSet {
		out.Debounce = p.debounce
	}
	if p.targetSet {
		out.FreshnessTarget = p.target
	}
	if err := out.Validate(); err != nil {
		return out, usagef("%v", err)
	}
	return out, nil
}

// parsePolicyMode parses --auto-refresh with matview's one parser of the
// mode; an empty flag is refused (it names no mode).
func parsePolicyMode(s string) (matview.RefreshMode, error) {
	if t := strings.TrimSpace(s); t != "" {
		if m, err := matview.ParseRefreshMode(t); err == nil {
			return m, nil
		}
	}
	return 0, usagef("--auto-refresh must be on-commit, interval or manual, got %q", s)
}

// createOptions are the options that make `view create` write the policy
// into the create commit itself when any policy flag was given (a view
// without one is on-commit already).
func (p *policyFlags) createOptions(cmd *cobra.Command, view string) ([]matview.CreateOption, error) {
	pol, err := p.merge(cmd, view, matview.Policy{})
	if err != nil || !p.any {
		return nil, err
	}
	return []matview.CreateOption{matview.WithMetadata(pol.Metadata())}, nil
}

// describePolicy is a policy in words.
func describePolicy(p matview.Policy) string {
	s := p.Mode.String()
	if p.Mode == matview.Interval {
		s += " every " + p.Interval.String()
	}
	if p.Debounce > 0 {
		s += ", debounce " + p.Debounce.String()
	}
	if p.FreshnessTarget > 0 {
		s += ", freshness target " + p.FreshnessTarget.String()
	}
	return s
}

// policyJSON is the --json output of `view alter`.
type policyJSON struct {
	View              string  `json:"view"`
	AutoRefresh       string  `json:"auto_refresh"`
	IntervalSeconds   float64 `json:"interval_seconds,omitempty"`
	DebounceMS        float64 `json:"debounce_ms,omitempty"`
	FreshnessTargetMS float64 `json:"freshness_target_ms,omitempty"`
	Version           uint64  `json:"version"`
	KeepVersionsForMS float64 `json:"keep_versions_for_ms"`
	KeepVersions      int     `json:"keep_versions"`
	// CompactSmallFragments and CompactDeletedPercent are the view's
	// compaction policy.
	CompactSmallFragments int     `json:"compact_small_fragments"`
	CompactDeletedPercent float64 `json:"compact_deleted_percent"`
	// Budget is the view's default refresh budget, when alter set it.
	Budget *matview.Budget `json:"budget,omitempty"`
}

func newViewAlterCmd(stdout io.Writer) *cobra.Command {
	var dir string
	var asJSON bool
	var pf *policyFlags
	var rf *retentionFlags
	var cf *compactFlags
	var bf *budgetFlags
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
			db, err := openDB(cmd, dir)
			if err != nil {
				return err
			}
			defer db.Close()
			pf.read(cmd)
			rf.read(cmd)
			cf.read(cmd)
			if !pf.any && !rf.any && !cf.any && !bf.given(cmd) {
				names := slices.Concat(policyFlagNames, retentionFlagNames, compactFlagNames, budgetFlagNames)
				return usagef("view alter needs at least one of --%s", strings.Join(names, ", --"))
			}
			ctx := cmd.Context()
			v, err := db.OpenView(ctx, args[0])
			if err != nil {
				return err
			}
			info, err := v.Info(ctx)
			if err != nil {
				return err
			}
			base, err := matview.PolicyFromMetadata(info.Metadata)
			if err != nil {
				base = matview.Policy{} // an unreadable stored policy is replaced
			}
			pol, err := pf.merge(cmd, args[0], base)
			if err != nil {
				return err
			}
			ret, err := rf.merge(cmd, storedRetention(info.Metadata))
			if err != nil {
				return err
			}
			cp, err := cf.merge(cmd, storedCompactPolicy(info.Metadata))
			if err != nil {
				return err
			}
			md := map[string]string{}
			if cf.any {
				maps.Copy(md, cp.Metadata())
			}
			if pf.any {
				maps.Copy(md, pol.Metadata())
			}
			if rf.any {
				maps.Copy(md, ret.Metadata())
			}
			b, err := alterBudget(cmd, bf, info.Metadata, md)
			if err != nil {
				return err
			}
			version, err := v.SetMetadata(ctx, md)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(stdout, policyJSON{View: args[0], AutoRefresh: pol.Mode.String(),
					IntervalSeconds: pol.Interval.Seconds(), DebounceMS: ms(pol.Debounce), FreshnessTargetMS: ms(pol.FreshnessTarget),
					KeepVersionsForMS: ms(ret.KeepFor), KeepVersions: ret.Keep, CompactSmallFragments: cp.SmallFragments,
					CompactDeletedPercent: cp.DeletedPercent, Budget: b, Version: version})
			}
			var parts []string
			if pf.any {
				parts = append(parts, "auto-refresh "+describePolicy(pol))
			}
			if rf.any {
				parts = append(parts, describeRetention(ret))
			}
			if cf.any {
				parts = append(parts, describeCompact(cp))
			}
			if b != nil {
				parts = append(parts, "default refresh budget "+describeBudget(*b))
			}
			_, err = fmt.Fprintf(stdout, "altered view %s: %s (view version %d)\n", args[0], strings.Join(parts, "; "), version)
			return err
		},
	}
	dbFlag(cmd, &dir)
	pf = addPolicyFlags(cmd)
	rf = addRetentionFlags(cmd, "(version cleanup by mvd serve and view optimize)")
	cf = addCompactFlags(cmd)
	bf = addBudgetFlags(cmd, "default budget of the daemon's refreshes")
	cmd.Flags().BoolVar(&asJSON, "json", false, `print {"view","auto_refresh","interval_seconds","debounce_ms","freshness_target_ms","version","keep_versions_for_ms","keep_versions","compact_small_fragments","compact_deleted_percent","budget"}`)
	return cmd
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
