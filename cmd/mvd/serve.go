package main

import (
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/mvd-project/mvd/daemon"
	"github.com/mvd-project/mvd/daemon/wire"
)

const serveLong = `Runs the daemon in the foreground: it watches the database's tables and
keeps every materialized view fresh as its auto-refresh policy says
(on-commit by default, interval or manual), and serves /healthz, /readyz,
/metrics and the control API on the admin address (--admin-addr).

Control API (JSON, docs/control.md): GET /v1/views, POST /v1/views,
GET|PATCH|DELETE /v1/views/{view}, POST /v1/views/{view}/refresh, POST
/v1/sql, GET /v1/jobs, GET /v1/jobs/{id}, POST /v1/jobs/{id}/wait and
/cancel. mvd view, mvd sql and mvd job use it while the daemon runs. With
--admin-token-file FILE (or MVD_ADMIN_TOKEN) every admin request must carry
"Authorization: Bearer TOKEN" (401 otherwise); an --admin-addr other than
loopback (127.0.0.1, ::1, localhost) requires a token, or serve refuses to
start. Request bodies are at most 1 MiB (413).

Configuration: flags win over environment variables (MVD_DB, MVD_NATS_URL,
MVD_ADMIN_ADDR, … : MVD_ and the flag name in capitals, dashes as
underscores), which win over the YAML file of --config (keys as the flag
names). --check-config validates the configuration, prints it as JSON and
exits.

One daemon serves a database at a time: with the embedded NATS server a
second one on the same database refuses to start, whatever its state
directory (daemons sharing one external --nats-url may serve a database
together). While it runs, STATE/serve.json (mode 0600) tells
other mvd commands how to reach it; it is removed on exit.

Object storage: --db s3://BUCKET/PREFIX with the AWS_* environment and
repeatable --storage-option KEY=VALUE (LanceDB's keys). The state directory
stays local: --state-dir, by default the user cache directory's
mvd/<16 hex of the SHA-256 of the URI>. Tables are polled (one HEAD per
watched table every --poll-interval, 25ms by default, and one LIST of the
database a second); --watch fsnotify is refused. No lock can be taken on the
store: a second daemon on this host is refused by the state directory's
lock, one elsewhere is not (serve warns; view commits stay conditional PUTs,
so the two conflict but never commit one source step twice).

SIGTERM or Ctrl-C drains: no new refresh starts, refreshes in flight finish
their commit, exit status 0. A second signal stops at once; views are left at
their previous or new version, whole. docs/serve.md has the details.`

// newServeCmd is `mvd serve`: flags and wiring only; the daemon is
// package daemon.
func newServeCmd(stdout, stderr io.Writer) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "serve --db DIR",
		Short: "run the daemon that keeps a database's views fresh",
		Long:  serveLong,
		Example: `  mvd serve --db ./data
  mvd serve --db s3://lake/prod --storage-option aws_endpoint=http://127.0.0.1:9000 --storage-option allow_http=true
  mvd serve --config mvd.yaml --log-format json
  MVD_DB=./data mvd serve --check-config`,
		Args: exactArgs(0, "no arguments (give the database as --db DIR)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return daemon.Command(cmd.Flags(), os.Environ(), stdout, stderr, wire.Deps)
		},
	}
	daemon.BindCommandFlags(cmd.Flags())
	return cmd
}
