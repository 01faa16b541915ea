// Command mvd keeps materialized views over Lance tables fresh.
//
// Usage:
//
//	mvd table versions PATH [--json]
//	mvd table schema PATH [--version N] [--json]
//	mvd table changes PATH --from N --to M [--json]
//	mvd table copy SRC DST [--version N] [--data-storage-version 2.0|2.1|2.2] [--stable-row-ids=true|false]
//	mvd table scan PATH [--version N] [--columns a,b | --select SQL] [--where SQL] [--with-row-ids] [--limit N] [--format jsonl|arrow|table]
//	mvd serve --db DIR [--config mvd.yaml] [--nats-url URL] [--admin-addr HOST:PORT] [--log-format json|text] [--check-config]
//	mvd version [--json]
//	mvd help [COMMAND...]
//
// Every error is one line on stderr and a non-zero exit status: 2 for a
// usage mistake, the code of an error that has an ExitCode method (3 for a
// conflict with a concurrent refresh), 1 for anything else.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := runContext(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
