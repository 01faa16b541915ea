package daemon

import (
	"fmt"
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

// ParseRefreshMode parses "on-commit", "interval" and "manual".
func ParseRefreshMode(s string) (RefreshMode, error) {
	switch strings.ToLower(s) {
	case "", "on-commit", "on_commit":
		return OnCommit, nil
	case "interval":
		return Interval, nil
	case "manual":
		return Manual, nil
	}
	return 0, fmt.Errorf("unknown auto-refresh policy %q (want on-commit, interval or manual)", s)
}

// Policy is when a view is refreshed. It is stored in the view's own
// metadata (by matview), so any daemon serving the view applies it.
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
