package daemon

import (
	"time"

	"github.com/mvd-project/mvd/matview"
)

// maxBurstWait bounds the wait burst coalescing adds; burstFactor is that
// wait in units of the last refresh's duration.
const (
	maxBurstWait = 100 * time.Millisecond
	burstFactor  = 4
	burstAfter   = 3 // bursting refreshes in a row before waits start
)

// burst detects bursts of source commits: while commits come much faster
// than refreshes finish, the next refresh waits a little (a few times the
// last refresh's duration, at most maxBurstWait) to take more of them at
// once. The rate is measured between refresh starts as source versions per
// time, not as commits per refresh: the wait itself makes refreshes take
// more commits, and counting those would keep a slow, steady writer in
// "burst" forever, adding the wait to every commit's latency. It is used by
// the owner's goroutine only.
type burst struct {
	lastEnd     time.Time
	lastTook    time.Duration
	on          bool
	rateVersion uint64        // source version at the last refresh start that named one
	rateAt      time.Time     // that start
	commitGap   time.Duration // smoothed time between source commits (0: unknown)
	run         int           // consecutive refreshes that found commits bursting
}

// started records a refresh starting at start, woken for source version
// (0: not known, a catch-up or a retry from the source).
func (b *burst) started(version uint64, start time.Time) {
	if version == 0 {
		return
	}
	if version > b.rateVersion && !b.rateAt.IsZero() {
		gap := start.Sub(b.rateAt) / time.Duration(version-b.rateVersion)
		if b.commitGap == 0 {
			b.commitGap = gap
		} else {
			b.commitGap = (b.commitGap + gap) / 2
		}
	} else if version == b.rateVersion {
		return // a retry of the same version
	}
	b.rateVersion, b.rateAt = version, start
}

// ended records a refresh that took took and ended at end. Only a
// sustained burst turns the wait on, not one slow refresh (a load spike):
// the wait would land on top of the commits already delayed by it.
func (b *burst) ended(took time.Duration, end time.Time) {
	b.lastEnd, b.lastTook = end, took
	if b.bursting(took) {
		b.run++
	} else {
		b.run = 0
	}
	b.on = b.run >= burstAfter
}

// bursting reports whether source commits come at least twice as fast as
// refreshes of took finish: only then does waiting to take several at once
// pay. A writer about as fast as the refreshes is served commit by commit
// (each refresh takes whatever arrived meanwhile), so its commits never
// wait for a burst wait on top of the refresh they queue behind.
func (b *burst) bursting(took time.Duration) bool {
	return b.commitGap > 0 && 2*b.commitGap < took
}

// until is when the next on-commit refresh may start (zero: no wait).
func (b *burst) until(pol matview.Policy) time.Time {
	if !b.on || pol.Mode != matview.OnCommit {
		return time.Time{}
	}
	d := min(burstFactor*b.lastTook, maxBurstWait)
	if pol.FreshnessTarget > 0 {
		d = min(d, pol.FreshnessTarget/4)
	}
	return b.lastEnd.Add(d)
}
