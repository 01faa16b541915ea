//go:build race

package daemon

// raceEnabled reports a -race build (see TestMemoryReturnedAfterBurst).
const raceEnabled = true
