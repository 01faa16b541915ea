//go:build race

package cdc

// raceEnabled is set when the tests run under the race detector, which
// slows every commit of the burst test down several times.
const raceEnabled = true
