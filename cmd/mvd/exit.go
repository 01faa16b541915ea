package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/mvd-project/mvd/control/httpapi"
)

// Exit statuses of mvd. Scripts rely on them; README documents them.
const (
	exitOK       = 0
	exitFailure  = 1 // anything that is not one of the below
	exitUsage    = 2 // a mistake in the command line
	exitConflict = 3 // lost a race with a concurrent refresh or commit
)

// exitCoder is implemented by errors that choose their own exit status
// (found with errors.As anywhere in the chain). A command returns such an
// error to exit with, e.g., exitConflict.
type exitCoder interface {
	ExitCode() int
}

// usageError marks a mistake in the command line (exit status 2).
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

// ExitCode implements exitCoder.
func (e usageError) ExitCode() int { return exitUsage }

func usagef(format string, args ...any) error {
	return usageError{fmt.Sprintf(format, args...)}
}

// exitCode maps the error a command returned to mvd's exit status.
func exitCode(err error) int {
	if err == nil {
		return exitOK
	}
	var ec exitCoder
	if errors.As(err, &ec) {
		if c := ec.ExitCode(); c > 0 && c < 126 {
			return c
		}
	}
	return exitFailure
}

// run executes one command line and returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	return runContext(context.Background(), args, stdout, stderr)
}

// runContext executes one command line; commands stop early when ctx is
// done (Ctrl-C). Results go to stdout; stderr gets progress of long work
// and, on failure, exactly one "mvd: …" line.
func runContext(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	root := newRootCmd(stdout, stderr)
	root.SetArgs(args)
	return report(root.ExecuteContext(ctx), stderr)
}

// reportedError is implemented by errors whose failures were each
// reported on stderr already (the shell's), so that no second line
// follows them.
type reportedError interface {
	Reported() bool
}

// report prints err's one "mvd: …" line (none for a reportedError) and
// returns the exit status.
func report(err error, stderr io.Writer) int {
	var r reportedError
	if err != nil && !(errors.As(err, &r) && r.Reported()) {
		fmt.Fprintf(stderr, "mvd: %s\n", oneLine(err.Error()))
	}
	return exitCode(err)
}

// maxErrorLine caps the error line (the control API's cap: one rule for
// every "mvd: …" line and every API error).
const maxErrorLine = httpapi.MaxErrorLine

// oneLine folds a multi-line message into one line ("a; b") and caps its
// length, so that every error is exactly one line on stderr.
func oneLine(msg string) string { return httpapi.OneLine(msg) }
