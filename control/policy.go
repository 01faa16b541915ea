package control

import (
	"math"
	"time"

	"github.com/mvd-project/mvd/matview"
	"github.com/mvd-project/mvd/sqlexpr"
)

// PolicyJSON is a view's auto-refresh policy in JSON, in the names of
// `mvd view alter --json`.
type PolicyJSON struct {
	AutoRefresh       string  `json:"auto_refresh"`
	IntervalSeconds   float64 `json:"interval_seconds,omitempty"`
	DebounceMS        float64 `json:"debounce_ms,omitempty"`
	FreshnessTargetMS float64 `json:"freshness_target_ms,omitempty"`
}

// AlterJSON is what ALTER MATERIALIZED VIEW prints, in the shape of `mvd
// view alter --json`: the view's policy, retention and compaction after
// the alter, and the view version of its commit.
type AlterJSON struct {
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
}

// newAlterJSON is the answer of an alter that left view with policy p and
// metadata md (retention and compaction as `mvd view alter` reports them,
// defaults for values it cannot read) in view version version.
func newAlterJSON(view string, p matview.Policy, md map[string]string, version uint64) AlterJSON {
	r, err := matview.RetentionFromMetadata(md)
	if err != nil {
		r = matview.DefaultRetention
	}
	cp, err := matview.CompactPolicyFromMetadata(md, matview.DefaultCompactPolicy())
	if err != nil {
		cp = matview.DefaultCompactPolicy()
	}
	return AlterJSON{View: view, AutoRefresh: p.Mode.String(), IntervalSeconds: p.Interval.Seconds(), DebounceMS: ms(p.Debounce),
		FreshnessTargetMS: ms(p.FreshnessTarget), Version: version, KeepVersionsForMS: ms(r.KeepFor), KeepVersions: r.Keep,
		CompactSmallFragments: cp.SmallFragments, CompactDeletedPercent: cp.DeletedPercent}
}

// NewPolicyJSON is p in JSON.
func NewPolicyJSON(p matview.Policy) PolicyJSON {
	return PolicyJSON{AutoRefresh: p.Mode.String(), IntervalSeconds: p.Interval.Seconds(),
		DebounceMS: ms(p.Debounce), FreshnessTargetMS: ms(p.FreshnessTarget)}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// DescribePolicy is a policy in words.
func DescribePolicy(p matview.Policy) string {
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

// mergePolicy applies the options o of view (given in statement order)
// to base, the view's policy (the default for a new view), as `mvd view
// alter` applies its flags:
//
//   - auto_refresh_enabled = false is manual (and drops the interval);
//     = true turns a manual view on-commit and leaves another as it is;
//   - auto_refresh_interval_seconds = N > 0 is interval mode every N
//     seconds (refused with auto_refresh_enabled = false, or on a manual
//     view without auto_refresh_enabled = true); = 0 removes the
//     interval (an interval view becomes on-commit);
//   - debounce_ms and freshness_target_ms set those durations (0 removes).
//
// Every refusal names the option's position; nothing is written here.
func mergePolicy(view string, base matview.Policy, o sqlexpr.PolicyOptions) (matview.Policy, error) {
	out := base
	interval, err := duration(o, "auto_refresh_interval_seconds", o.IntervalSeconds, time.Second)
	if err != nil {
		return out, err
	}
	if e := o.AutoRefreshEnabled; e != nil {
		switch {
		case !*e && interval != nil && *interval > 0:
			return out, invalidAt(o.At["auto_refresh_interval_seconds"],
				"auto_refresh_interval_seconds applies only to a view that refreshes automatically, and auto_refresh_enabled is false")
		case !*e:
			out.Mode, out.Interval = matview.Manual, 0
		case out.Mode == matview.Manual:
			out.Mode = matview.OnCommit
		}
	}
	if interval != nil {
		switch {
		case *interval == 0:
			if out.Mode == matview.Interval {
				out.Mode = matview.OnCommit
			}
			out.Interval = 0
		case out.Mode == matview.Manual:
			return out, invalidAt(o.At["auto_refresh_interval_seconds"],
				"view %s does not refresh automatically (manual); add auto_refresh_enabled = true to refresh it every %s", view, *interval)
		default:
			out.Mode, out.Interval = matview.Interval, *interval
		}
	}
	for _, d := range []struct {
		key string
		v   *uint64
		dst *time.Duration
	}{{"debounce_ms", o.DebounceMS, &out.Debounce}, {"freshness_target_ms", o.FreshnessTargetMS, &out.FreshnessTarget}} {
		v, err := duration(o, d.key, d.v, time.Millisecond)
		if err != nil {
			return out, err
		}
		if v != nil {
			*d.dst = *v
		}
	}
	if err := out.Validate(); err != nil {
		return out, invalidAt(firstPos(o.At), "%v", err)
	}
	return out, nil
}

// maxPolicyDuration is the longest duration a policy stores: the stored
// metadata is read back only below half of the int64 range.
const maxPolicyDuration = math.MaxInt64 / 4

// duration is option key's value v in unit, refused past maxPolicyDuration.
func duration(o sqlexpr.PolicyOptions, key string, v *uint64, unit time.Duration) (*time.Duration, error) {
	if v == nil {
		return nil, nil
	}
	if *v > uint64(maxPolicyDuration/unit) {
		return nil, invalidAt(o.At[key], "option %s = %d is too large (at most %d)", key, *v, uint64(maxPolicyDuration/unit))
	}
	d := time.Duration(*v) * unit
	return &d, nil
}

// firstPos is the smallest offset in at (0 when empty).
func firstPos(at map[string]int) int {
	first := -1
	for _, p := range at {
		if first < 0 || p < first {
			first = p
		}
	}
	return max(first, 0)
}
