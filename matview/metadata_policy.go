package matview

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// RefreshMode is a view's auto-refresh policy.
type RefreshMode int

const (
	// OnCommit refreshes as each source commit is noticed (the default).
	OnCommit RefreshMode = iota
	// Interval refreshes at most once every Policy.Interval
	// (LanceDB Enterprise's auto_refresh_interval_seconds).
	Interval
	// Manual never refreshes by itself; only an explicit request does.
	Manual
)

// String is the mode as stored and as flags spell it.
func (m RefreshMode) String() string {
	switch m {
	case OnCommit:
		return "on-commit"
	case Interval:
		return "interval"
	case Manual:
		return "manual"
	}
	return fmt.Sprintf("refresh-mode(%d)", int(m))
}

// ParseRefreshMode parses "on-commit" (or "on_commit"), "interval" and
// "manual", in any case: the one parser of the mode, for the stored
// metadata and the command line alike.
func ParseRefreshMode(s string) (RefreshMode, error) {
	switch strings.ToLower(s) {
	case "on-commit", "on_commit":
		return OnCommit, nil
	case "interval":
		return Interval, nil
	case "manual":
		return Manual, nil
	}
	return 0, fmt.Errorf("unknown auto-refresh policy %q (want on-commit, interval or manual)", s)
}

// Policy is when a view is refreshed. It is stored in the view's own
// metadata beside the other mv.* keys, so any daemon serving the view
// applies it, and mvd view create/alter write it.
type Policy struct {
	Mode RefreshMode
	// Interval is the minimum time between the starts of two refreshes
	// under Interval (required > 0 there).
	Interval time.Duration
	// Debounce, if set, waits this long after the first wake-up of a
	// batch before refreshing, so that the commits of a burst share one
	// refresh. It bounds the latency it adds.
	Debounce time.Duration
	// FreshnessTarget, if set, is the lag (source commit to view commit)
	// the view should stay under; each refresh over it is counted in
	// mvd_view_freshness_target_missed and logged.
	FreshnessTarget time.Duration
}

// Validate checks a policy's fields against its mode.
func (p Policy) Validate() error {
	switch p.Mode {
	case OnCommit, Manual:
	case Interval:
		if p.Interval <= 0 {
			return fmt.Errorf("auto-refresh interval needs an interval > 0")
		}
	default:
		return fmt.Errorf("unknown auto-refresh mode %d", int(p.Mode))
	}
	if p.Interval < 0 || p.Debounce < 0 || p.FreshnessTarget < 0 {
		return fmt.Errorf("auto-refresh durations must not be negative")
	}
	return nil
}

// The view metadata keys a Policy is stored under (schema metadata of the
// view, beside LanceDB's mv.* keys, which refreshes preserve).
const (
	// KeyAutoRefresh is "on-commit", "interval" or "manual".
	KeyAutoRefresh = "mv.auto_refresh"
	// KeyIntervalSeconds is Interval in seconds (decimal), as LanceDB
	// Enterprise's auto_refresh_interval_seconds.
	KeyIntervalSeconds = "mv.auto_refresh_interval_seconds"
	// KeyDebounceMS is Debounce in milliseconds (decimal).
	KeyDebounceMS = "mv.auto_refresh_debounce_ms"
	// KeyFreshnessTargetMS is FreshnessTarget in milliseconds (decimal).
	KeyFreshnessTargetMS = "mv.freshness_target_ms"
)

// PolicyFromMetadata reads a view's policy from its metadata. A view
// without KeyAutoRefresh (one LanceDB created) is OnCommit: serving a
// database means keeping its views fresh.
func PolicyFromMetadata(md map[string]string) (Policy, error) {
	var p Policy
	if s := md[KeyAutoRefresh]; s != "" {
		m, err := ParseRefreshMode(s)
		if err != nil {
			return Policy{}, fmt.Errorf("%s: %w", KeyAutoRefresh, err)
		}
		p.Mode = m
	}
	for _, f := range []struct {
		key  string
		unit time.Duration
		dst  *time.Duration
	}{
		{KeyIntervalSeconds, time.Second, &p.Interval},
		{KeyDebounceMS, time.Millisecond, &p.Debounce},
		{KeyFreshnessTargetMS, time.Millisecond, &p.FreshnessTarget},
	} {
		s, ok := md[f.key]
		if !ok || s == "" {
			continue
		}
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
			return Policy{}, fmt.Errorf("%s: %q is not a non-negative number", f.key, s)
		}
		if v*float64(f.unit) >= math.MaxInt64/2 {
			return Policy{}, fmt.Errorf("%s: %q is too large", f.key, s)
		}
		*f.dst = time.Duration(v * float64(f.unit))
	}
	if err := p.Validate(); err != nil {
		return Policy{}, err
	}
	return p, nil
}

// Metadata returns the metadata keys that store p; a zero duration's key
// is present and empty so that writing the map clears an older value.
func (p Policy) Metadata() map[string]string {
	num := func(d, unit time.Duration) string {
		if d == 0 {
			return ""
		}
		return strconv.FormatFloat(float64(d)/float64(unit), 'f', -1, 64)
	}
	return map[string]string{
		KeyAutoRefresh:       p.Mode.String(),
		KeyIntervalSeconds:   num(p.Interval, time.Second),
		KeyDebounceMS:        num(p.Debounce, time.Millisecond),
		KeyFreshnessTargetMS: num(p.FreshnessTarget, time.Millisecond),
	}
}
