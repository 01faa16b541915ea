package daemon

import "time"

// clock is the owner's time: the real one in the daemon, a manual one in
// tests, so that scheduling is tested without sleeping.
type clock interface {
	Now() time.Time
	// After returns a channel that receives once d has passed, and a
	// function that stops it (reporting whether it had not fired yet).
	After(d time.Duration) (<-chan time.Time, func() bool)
}

// realClock is the wall clock.
type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) After(d time.Duration) (<-chan time.Time, func() bool) {
	t := time.NewTimer(d)
	return t.C, t.Stop
}
