// Command mvd keeps materialized views over Lance tables fresh.
//
// Usage:
//
//	mvd table versions PATH [--json]
//	mvd table schema PATH [--version N] [--json]
//	mvd table changes PATH --from N --to M [--json]
//	mvd table copy SRC DST [--version N] [--data-storage-version 2.0|2.1|2.2] [--stable-row-ids=true|false]
//	mvd table scan PATH [--version N] [--columns a,b | --select SQL] [--where SQL] [--with-row-ids] [--limit N] [--format jsonl|arrow|table]
//
// Every error is one line on stderr and a non-zero exit status.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// usageError marks a mistake in the command line (exit status 2).
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return usageError{fmt.Sprintf(format, args...)}
}

const usage = `mvd keeps materialized views over Lance tables fresh.

Usage:
  mvd table versions PATH [--json]                 list a table's versions
  mvd table schema PATH [--version N] [--json]     show a table's schema
  mvd table changes PATH --from N --to M [--json]  row ids inserted, updated, deleted between versions
  mvd table scan PATH [--version N] [--columns a,b | --select SQL] [--where SQL]
                 [--with-row-ids] [--limit N] [--format jsonl|arrow|table]
                                                   read a version's rows, optionally filtered and projected with SQL
  mvd table copy SRC DST [--version N] [--data-storage-version 2.0|2.1|2.2] [--stable-row-ids=true|false]
                                                   write a version's rows and schema as a new table
  mvd help                                         show this help
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run executes one command line and returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	err := dispatch(args, stdout, stderr)
	if err == nil {
		return 0
	}
	fmt.Fprintf(stderr, "mvd: %v\n", err)
	var ue usageError
	if errors.As(err, &ue) {
		return 2
	}
	return 1
}

// dispatch runs a command. Results go to stdout; stderr is only for
// progress of long work (the error line itself is printed by run).
func dispatch(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return usagef("missing command; run 'mvd help'")
	}
	switch args[0] {
	case "help", "-h", "--help":
		_, err := io.WriteString(stdout, usage)
		return err
	case "table":
		return tableCommand(args[1:], stdout, stderr)
	}
	return usagef("unknown command %q; run 'mvd help'", args[0])
}
