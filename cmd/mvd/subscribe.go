package main

import (
	"context"
	"io"

	"github.com/spf13/cobra"

	"github.com/mvd-project/mvd/matview"
	"github.com/mvd-project/mvd/stream"
	"github.com/mvd-project/mvd/subscribe"
)

const subscribeLong = `Subscribe prints one line per refresh of the views that mvd serve keeps
fresh, as each refresh commits, until Ctrl-C.

It finds the daemon of --db DIR through DIR/.mvd/serve.json (written by
mvd serve; --state-dir if the daemon was given one; for --db
s3://BUCKET/PREFIX the local state directory mvd serve derives from the URI,
or --state-dir), or connects to the NATS
server of --nats-url (with --nats-creds and the TLS flags) when the daemon
uses an external one (--subject-prefix picks the database there: by default
serve.json's, or the prefix mvd serve derives from --db, or mvd). Without a running daemon it fails at once (exit 1),
unless --wait. When the daemon restarts, subscribe reconnects by itself and
goes on (notifications published meanwhile are delivered when the stream
still holds them). Given a cluster's URLs (--nats-url U1,U2,U3), it keeps
printing when the node it is connected to is lost, each notification once.

Without --view it follows every view, including views created later.

Output: a readable line per refresh:
  10:30:00.123 daily incremental: 1 row written, source v12 -> view v7, lag 3.1 ms
  10:30:00.456 daily FAILED: <error> (view v7 still reflects source v12)
Status lines (subscribed, daemon lost, reconnected) go to stderr.

With --json the first line is {"subscribed":[...],"all_views":B} once the
subscription is in place: the views named by --view, or (all_views true)
the views of DIR at that moment ([] with --nats-url and no --db). Every
further line is a refresh notification exactly as published
(docs/messages.md):
  {"schema":1,"view":"v","source":"events","mode":"incremental","rows_written":1,
   "source_version":12,"version":7,"lag_ms":3.1,"committed_at":"…"}`

// newSubscribeCmd is `mvd subscribe`; the logic is package subscribe.
func newSubscribeCmd(stdout, stderr io.Writer) *cobra.Command {
	var o subscribe.Options
	cmd := &cobra.Command{
		Use:   "subscribe --db DIR [--view NAME]... [--json]",
		Short: "print a line per view refresh of a running mvd serve",
		Long:  subscribeLong,
		Example: `  mvd subscribe --db ./data
  mvd subscribe --db ./data --view daily --view top --json
  mvd subscribe --nats-url nats://nats.internal:4222 --nats-creds mvd.creds --json
  mvd subscribe --nats-url nats://n1:4222,nats://n2:4222,nats://n3:4222 --subject-prefix shop --json`,
		Args: exactArgs(0, "no arguments (give the database as --db DIR, views as --view NAME)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.DB == "" && o.NATSURL == "" {
				return usagef("subscribe needs --db DIR (or --nats-url URL)")
			}
			for _, v := range o.Views {
				if v == "" {
					return usagef("--view needs a view NAME")
				}
				if err := matview.CheckViewName(v); err != nil {
					return usagef("--view: %v", err)
				}
			}
			if o.SubjectPrefix != "" {
				if err := stream.CheckPrefix(o.SubjectPrefix); err != nil {
					return usagef("--subject-prefix: %v", err)
				}
			}
			o.Out, o.Status = stdout, stderr
			if o.DB != "" {
				dir := o.DB
				so, err := storageOptions(cmd)
				if err != nil {
					return err
				}
				o.KnownViews = func(ctx context.Context) ([]string, error) { return viewNames(ctx, dir, so) }
			}
			return subscribe.Run(cmd.Context(), o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.DB, "db", "", "the database `DIR` whose mvd serve to follow")
	f.StringVar(&o.StateDir, "state-dir", "", "the daemon's state `DIR` (default: DIR/.mvd, or for s3:// the one mvd serve derives, as mvd serve)")
	f.StringArrayVar(&o.Views, "view", nil, "follow view `NAME` (repeat for more; default: every view, also later ones)")
	f.BoolVar(&o.JSON, "json", false, `print {"subscribed":[...]} first, then each notification as its JSON message`)
	f.BoolVar(&o.Wait, "wait", false, "wait for mvd serve to start instead of failing when none runs")
	f.StringVar(&o.NATSURL, "nats-url", "", "connect to this NATS `URL` (comma-separated cluster) instead of serve.json's")
	f.StringVar(&o.SubjectPrefix, "subject-prefix", "", "the database's subject `TOKEN` on a shared NATS (default: serve.json's, or as mvd serve derives it from --db, or mvd)")
	f.StringVar(&o.CredsFile, "nats-creds", "", "NATS credentials `FILE` for --nats-url")
	f.StringVar(&o.TLS.CertFile, "nats-tls-cert", "", "client certificate `FILE` (PEM) for --nats-url")
	f.StringVar(&o.TLS.KeyFile, "nats-tls-key", "", "client key `FILE` (PEM) for --nats-url")
	f.StringVar(&o.TLS.CAFile, "nats-tls-ca", "", "CA bundle `FILE` (PEM) that signs the server's certificate")
	addStorageOptionFlag(cmd)
	return cmd
}

// viewNames lists the views of dir now (views that fail to open are
// listed too: the daemon reports their errors).
func viewNames(ctx context.Context, dir string, so map[string]string) ([]string, error) {
	db, err := matview.OpenWith(dir, matview.Options{StorageOptions: so})
	if err != nil {
		return nil, err
	}
	defer db.Close()
	entries, err := db.ListViews(ctx)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, e.Name)
	}
	return names, nil
}
