package daemon

import (
	"sync"
	"testing"
	"time"
)

// manualClock is a clock that moves only when the test says: scheduling is
// tested without sleeping.
type manualClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*manualTimer
}

type manualTimer struct {
	at time.Time
	c  chan time.Time
}

func newManualClock() *manualClock { return &manualClock{now: time.Unix(1_000_000, 0)} }

func (c *manualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *manualClock) After(d time.Duration) (<-chan time.Time, func() bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &manualTimer{at: c.now.Add(d), c: make(chan time.Time, 1)}
	c.timers = append(c.timers, t)
	return t.c, func() bool { return c.remove(t) }
}

func (c *manualClock) remove(t *manualTimer) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, x := range c.timers {
		if x == t {
			c.timers = append(c.timers[:i], c.timers[i+1:]...)
			return true
		}
	}
	return false
}

// Advance moves the clock by d and fires the timers that are due.
func (c *manualClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	keep := c.timers[:0]
	for _, t := range c.timers {
		if t.at.After(c.now) {
			keep = append(keep, t)
			continue
		}
		t.c <- c.now
	}
	c.timers = keep
}

// waitTimer waits until someone waits on the clock for at.
func (c *manualClock) waitTimer(t *testing.T, at time.Time) {
	t.Helper()
	waitUntil(t, "a timer for "+at.Sub(time.Unix(1_000_000, 0)).String(), func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		for _, x := range c.timers {
			if x.at.Equal(at) {
				return true
			}
		}
		return false
	})
}

// nextTimer waits until someone waits on the clock and returns the
// earliest deadline.
func (c *manualClock) nextTimer(t *testing.T) time.Time {
	t.Helper()
	var at time.Time
	waitUntil(t, "a timer", func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		for i, x := range c.timers {
			if i == 0 || x.at.Before(at) {
				at = x.at
			}
		}
		return len(c.timers) > 0
	})
	return at
}
