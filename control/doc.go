// Package control is the control plane's statement executor: it runs the
// view and job SQL of `mvd sql` (statement and shell) and of the daemon's
// POST /v1/sql, so that both answer a statement with the same code and the
// same output. A Result renders both as the shell's text and as JSON.
//
// Statements that need a running daemon (SHOW JOBS, DESCRIBE JOB, CANCEL
// JOB and REFRESH … WITH (async = true)) go through the Jobs interface;
// an Executor without one refuses them with ErrNoDaemon and changes
// nothing.
package control
