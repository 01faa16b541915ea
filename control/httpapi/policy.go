package httpapi

import (
	"context"
	"errors"
	"maps"
	"math"
	"strings"
	"time"

	"github.com/mvd-project/mvd/matview"
)

// PolicyChange is a change of a view's auto-refresh policy: the body of
// PATCH /v1/views/{view}, the policy fields of POST /v1/views, and what
// `mvd view alter`'s flags say. A field left out keeps its value; a
// duration of 0 removes the setting. Refusals are usage errors naming
// the CLI's flags (--auto-refresh is auto_refresh, --interval
// interval_seconds, --debounce debounce_ms, --freshness-target
// freshness_target_ms).
type PolicyChange struct {
	// AutoRefresh is on-commit, interval or manual.
	AutoRefresh *string `json:"auto_refresh,omitempty"`
	// IntervalSeconds is the interval of the interval mode.
	IntervalSeconds *float64 `json:"interval_seconds,omitempty"`
	// DebounceMS waits that long after a commit before refreshing.
	DebounceMS *float64 `json:"debounce_ms,omitempty"`
	// FreshnessTargetMS makes refreshes lagging more than it visible.
	FreshnessTargetMS *float64 `json:"freshness_target_ms,omitempty"`
	// KeepVersionsForMS and KeepVersions are the view's version retention
	// (--keep-versions-for, --keep-versions): the versions of the last
	// KeepVersionsForMS and at least the last KeepVersions are kept.
	KeepVersionsForMS *float64 `json:"keep_versions_for_ms,omitempty"`
	KeepVersions      *int     `json:"keep_versions,omitempty"`
	// CompactSmallFragments and CompactDeletedPercent are the view's
	// compaction policy (--compact-small-fragments,
	// --compact-deleted-percent; negative: never for that reason).
	CompactSmallFragments *int     `json:"compact_small_fragments,omitempty"`
	CompactDeletedPercent *float64 `json:"compact_deleted_percent,omitempty"`
	// Budget holds the fields of the view's default refresh budget to
	// change (--cpu-millis, --memory-bytes, --gpu-count, --gpu-class):
	// merged onto the stored one, the result checked against LanceDB
	// Enterprise's rules.
	Budget *matview.Budget `json:"budget,omitempty"`
}

// Any reports whether the change sets anything.
func (c PolicyChange) Any() bool {
	return c.AnyPolicy() || c.AnyRetention() || c.AnyCompact() || c.Budget != nil
}

// BudgetError is a refused budget in a request (exit code 2, status
// 400); it unwraps to matview's sentinels (ErrBudget, ErrGPU).
type BudgetError struct{ Err error }

func (e BudgetError) Error() string { return e.Err.Error() }

// Unwrap returns matview's error.
func (e BudgetError) Unwrap() error { return e.Err }

// ExitCode is 2: a refused budget is a usage mistake.
func (e BudgetError) ExitCode() int { return codeUsage }

// applyBudget merges the change's budget fields onto stored (the view's
// metadata; an unreadable stored budget is replaced) and validates it.
func (c PolicyChange) applyBudget(stored map[string]string) (*matview.Budget, error) {
	if c.Budget == nil {
		return nil, nil
	}
	out, err := matview.BudgetFromMetadata(stored)
	if err != nil {
		out = matview.Budget{}
	}
	if c.Budget.CPUMillis != nil {
		out.CPUMillis = c.Budget.CPUMillis
	}
	if c.Budget.MemoryBytes != nil {
		out.MemoryBytes = c.Budget.MemoryBytes
	}
	if c.Budget.GPUCount != nil {
		out.GPUCount = c.Budget.GPUCount
	}
	if c.Budget.GPUClass != nil {
		out.GPUClass = c.Budget.GPUClass
	}
	if err := out.Validate(); err != nil {
		if errors.Is(err, matview.ErrBudget) || errors.Is(err, matview.ErrGPU) {
			return nil, BudgetError{err}
		}
		return nil, err
	}
	return &out, nil
}

// AnyCompact reports whether the change sets a compaction field.
func (c PolicyChange) AnyCompact() bool {
	return c.CompactSmallFragments != nil || c.CompactDeletedPercent != nil
}

// ApplyCompact applies the compaction fields to base and validates the
// result; a bad value is a usage mistake.
func (c PolicyChange) ApplyCompact(base matview.CompactPolicy) (matview.CompactPolicy, error) {
	out := base
	if c.CompactSmallFragments != nil {
		out.SmallFragments = *c.CompactSmallFragments
	}
	if c.CompactDeletedPercent != nil {
		out.DeletedPercent = *c.CompactDeletedPercent
	}
	if err := out.Validate(); err != nil {
		return out, Usagef("%v", err)
	}
	return out, nil
}

// StoredCompactPolicy is the compaction policy in a view's metadata; an
// unreadable one is the default (an alter replaces it).
func StoredCompactPolicy(md map[string]string) matview.CompactPolicy {
	p, err := matview.CompactPolicyFromMetadata(md, matview.DefaultCompactPolicy())
	if err != nil {
		return matview.DefaultCompactPolicy()
	}
	return p
}

// AnyPolicy reports whether the change sets an auto-refresh field.
func (c PolicyChange) AnyPolicy() bool {
	return c.AutoRefresh != nil || c.IntervalSeconds != nil || c.DebounceMS != nil || c.FreshnessTargetMS != nil
}

// AnyRetention reports whether the change sets a retention field.
func (c PolicyChange) AnyRetention() bool { return c.KeepVersionsForMS != nil || c.KeepVersions != nil }

// ApplyRetention applies the retention fields to base and validates the
// result; a bad value is a usage mistake.
func (c PolicyChange) ApplyRetention(base matview.Retention) (matview.Retention, error) {
	out := base
	if keepFor, ok := duration(c.KeepVersionsForMS, time.Millisecond); ok {
		if keepFor < 0 {
			return out, Usagef("--keep-versions-for must not be negative, got %s", keepFor)
		}
		out.KeepFor = keepFor
	}
	if c.KeepVersions != nil {
		if *c.KeepVersions < 1 {
			return out, Usagef("--keep-versions must be at least 1 (the latest version is always kept), got %d", *c.KeepVersions)
		}
		out.Keep = *c.KeepVersions
	}
	if err := out.Validate(); err != nil {
		return out, Usagef("%v", err)
	}
	return out, nil
}

// StoredRetention is the retention in a view's metadata; an unreadable
// stored one is the default (an alter replaces it).
func StoredRetention(md map[string]string) matview.Retention {
	r, err := matview.RetentionFromMetadata(md)
	if err != nil {
		return matview.DefaultRetention
	}
	return r
}

// Seconds and Millis express a duration as PolicyChange's fields do.
func Seconds(d time.Duration) *float64 { f := d.Seconds(); return &f }

// Millis is d in (fractional) milliseconds.
func Millis(d time.Duration) *float64 { f := float64(d) / float64(time.Millisecond); return &f }

// duration converts a field back (nil: not given).
func duration(f *float64, unit time.Duration) (time.Duration, bool) {
	if f == nil {
		return 0, false
	}
	return time.Duration(math.Round(*f * float64(unit))), true
}

// parseMode parses the mode with matview's one parser; empty names none.
func parseMode(s string) (matview.RefreshMode, error) {
	if t := strings.TrimSpace(s); t != "" {
		if m, err := matview.ParseRefreshMode(t); err == nil {
			return m, nil
		}
	}
	return 0, Usagef("--auto-refresh must be on-commit, interval or manual, got %q", s)
}

// Apply applies the change to base (the view's current policy, or the
// zero policy for a new view) and validates the result.
func (c PolicyChange) Apply(view string, base matview.Policy) (matview.Policy, error) {
	out := base
	if c.AutoRefresh != nil {
		m, err := parseMode(*c.AutoRefresh)
		if err != nil {
			return out, err
		}
		out.Mode = m
		if m != matview.Interval {
			out.Interval = 0
		}
	}
	interval, intervalSet := duration(c.IntervalSeconds, time.Second)
	debounce, debounceSet := duration(c.DebounceMS, time.Millisecond)
	target, targetSet := duration(c.FreshnessTargetMS, time.Millisecond)
	for _, d := range []struct {
		name string
		set  bool
		v    time.Duration
	}{{"interval", intervalSet, interval}, {"debounce", debounceSet, debounce}, {"freshness-target", targetSet, target}} {
		if d.set && d.v < 0 {
			return out, Usagef("--%s must not be negative, got %s", d.name, d.v)
		}
	}
	if intervalSet {
		if out.Mode != matview.Interval {
			if c.AutoRefresh != nil {
				return out, Usagef("--interval applies only to --auto-refresh interval, not %s", out.Mode)
			}
			return out, Usagef("--interval applies only to --auto-refresh interval (view %s is %s); add --auto-refresh interval", view, out.Mode)
		}
		out.Interval = interval
	}
	if out.Mode == matview.Interval && out.Interval <= 0 {
		return out, Usagef("--auto-refresh interval needs --interval DURATION > 0 (e.g. --interval 5s)")
	}
	if debounceSet {
		out.Debounce = debounce
	}
	if targetSet {
		out.FreshnessTarget = target
	}
	if err := out.Validate(); err != nil {
		return out, Usagef("%v", err)
	}
	return out, nil
}

// PolicyJSON is the answer to a policy change, `mvd view alter --json`.
type PolicyJSON struct {
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
	// Budget is the view's default refresh budget, when the alter set it.
	Budget *matview.Budget `json:"budget,omitempty"`
}

// NewPolicyJSON describes pol, ret and cp of view at version.
func NewPolicyJSON(view string, pol matview.Policy, ret matview.Retention, cp matview.CompactPolicy, version uint64) PolicyJSON {
	return PolicyJSON{View: view, AutoRefresh: pol.Mode.String(), IntervalSeconds: pol.Interval.Seconds(),
		DebounceMS: *Millis(pol.Debounce), FreshnessTargetMS: *Millis(pol.FreshnessTarget), Version: version,
		KeepVersionsForMS: *Millis(ret.KeepFor), KeepVersions: ret.Keep,
		CompactSmallFragments: cp.SmallFragments, CompactDeletedPercent: cp.DeletedPercent}
}

// AlterPolicy applies change to view's stored policy in one
// metadata-only commit (an unreadable stored policy is replaced) and
// returns the new policy and the view's version.
func AlterPolicy(ctx context.Context, db *matview.DB, view string, change PolicyChange) (PolicyJSON, error) {
	if !change.Any() {
		return PolicyJSON{}, Usagef("view alter needs at least one of --auto-refresh, --interval, --debounce, --freshness-target, --keep-versions-for, --keep-versions, --compact-small-fragments, --compact-deleted-percent, --cpu-millis, --memory-bytes, --gpu-count, --gpu-class")
	}
	v, err := db.OpenView(ctx, view)
	if err != nil {
		return PolicyJSON{}, err
	}
	info, err := v.Info(ctx)
	if err != nil {
		return PolicyJSON{}, err
	}
	base, err := matview.PolicyFromMetadata(info.Metadata)
	if err != nil {
		base = matview.Policy{}
	}
	pol, err := change.Apply(view, base)
	if err != nil {
		return PolicyJSON{}, err
	}
	ret, err := change.ApplyRetention(StoredRetention(info.Metadata))
	if err != nil {
		return PolicyJSON{}, err
	}
	cp, err := change.ApplyCompact(StoredCompactPolicy(info.Metadata))
	if err != nil {
		return PolicyJSON{}, err
	}
	md := map[string]string{}
	if change.AnyCompact() {
		maps.Copy(md, cp.Metadata())
	}
	if change.AnyPolicy() {
		maps.Copy(md, pol.Metadata())
	}
	if change.AnyRetention() {
		maps.Copy(md, ret.Metadata())
	}
	b, err := change.applyBudget(info.Metadata)
	if err != nil {
		return PolicyJSON{}, err
	}
	if b != nil {
		maps.Copy(md, b.Metadata())
	}
	version, err := v.SetMetadata(ctx, md)
	if err != nil {
		return PolicyJSON{}, err
	}
	out := NewPolicyJSON(view, pol, ret, cp, version)
	out.Budget = b
	return out, nil
}
