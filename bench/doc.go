// Package bench holds mvd's read benchmarks against LanceDB (issue 3): a
// full scan of a 1M-row table of every common column type, and take of
// random stable row ids from a 5M-row table. Every figure is reported as a
// ratio against LanceDB measured in the same run on the same table, never
// as a timed assertion; see README.md for how to run them and the figures.
//
// The package has no code of its own: only tests and benchmarks.
package bench
