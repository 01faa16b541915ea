package wire

import (
	"context"
	"errors"
	"log/slog"
	"net/url"
	"path/filepath"
	"strconv"

	"github.com/mvd-project/mvd/cdc"
	"github.com/mvd-project/mvd/daemon"
	"github.com/mvd-project/mvd/stream"
)

// Bus is the daemon's Bus over package stream: an embedded nats-server
// (the default) or an external server or cluster.
type Bus struct {
	cfg  daemon.Config
	log  *slog.Logger
	srv  *stream.Server
	conn *stream.Conn

	// backlog holds the version spans not published while NATS was
	// away; the republish goroutine (stopped by Close) sends them.
	backlog *backlog
	stop    context.CancelFunc
	stopped chan struct{}
}

var _ daemon.Bus = (*Bus)(nil)

// NewBus returns a Bus for the configuration; nothing starts until Start.
func NewBus(cfg daemon.Config, log *slog.Logger) *Bus {
	return &Bus{cfg: cfg, log: log, backlog: newBacklog()}
}

// Start starts the embedded server, or connects to the external one, and
// ensures the streams exist. The embedded server reuses the previous
// run's port and token (from serve.json) when the port is free, so that
// subscribers reconnect by themselves across a restart.
func (b *Bus) Start(ctx context.Context) (string, string, error) {
	var opts stream.ConnectOptions
	var natsURL, token string
	if b.cfg.NATSURL == "" {
		sc := stream.ServerConfig{StoreDir: filepath.Join(b.cfg.StateDir, "nats"), Logger: b.log}
		if prev, err := daemon.ReadServeInfo(b.cfg.StateDir); err == nil {
			if u, err := url.Parse(prev.NATSURL); err == nil {
				sc.Port, _ = strconv.Atoi(u.Port())
			}
			sc.Token = prev.Token
		}
		srv, err := stream.StartServer(ctx, sc)
		if err != nil && sc.Port != 0 {
			b.log.Info("previous NATS port unavailable; choosing another", "port", sc.Port, "err", err)
			sc.Port = 0
			srv, err = stream.StartServer(ctx, sc)
		}
		if err != nil {
			return "", "", err
		}
		b.srv = srv
		opts = srv.ConnectOptions()
		natsURL, token = srv.URL(), srv.Token()
	} else {
		opts = stream.ConnectOptions{URL: b.cfg.NATSURL, CredsFile: b.cfg.NATSCreds,
			TLS: stream.TLSOptions{CAFile: b.cfg.NATSTLSCA, CertFile: b.cfg.NATSTLSCert, KeyFile: b.cfg.NATSTLSKey}}
		natsURL = b.cfg.NATSURL
	}
	opts.Name, opts.Logger = "mvd serve", b.log
	conn, err := stream.Connect(ctx, opts)
	if err != nil {
		b.Close()
		return "", "", err
	}
	b.conn = conn
	if err := conn.EnsureStreams(ctx); err != nil {
		b.Close()
		return "", "", err
	}
	rctx, stop := context.WithCancel(context.Background())
	b.stop, b.stopped = stop, make(chan struct{})
	go func() {
		defer close(b.stopped)
		b.republish(rctx, conn)
	}()
	return natsURL, token, nil
}

// PublishChange publishes one version event's change set (without row
// ids when the watcher could not compute them: consumers then compute
// the step from the source). If NATS is away, or earlier change sets of
// the source still wait, the version is queued and an error returned: the
// daemon then wakes the views directly, and the change set is
// republished, in order, once NATS is back.
func (b *Bus) PublishChange(ctx context.Context, ev cdc.Event) error {
	op := ev.Operation
	if ev.To != ev.From+1 || op == "" {
		op = stream.OpMultiple
	}
	s := span{incarnation: ev.Incarnation, from: ev.From, to: ev.To, op: ev.Operation, committedAt: ev.CommittedAt}
	if b.conn == nil {
		b.backlog.add(ev.Table, s)
		return errors.New("NATS is not started")
	}
	if b.backlog.has(ev.Table) {
		b.backlog.add(ev.Table, s)
		return errBacklogged
	}
	cs := &stream.ChangeSet{
		Source: ev.Table, Incarnation: ev.Incarnation, From: ev.From, To: ev.To, Op: op,
		SchemaFingerprint: ev.SchemaFingerprint, CommittedAt: ev.CommittedAt,
	}
	if ev.Changes != nil {
		cs.Inserted, cs.Updated, cs.Deleted = ev.Changes.Inserted, ev.Changes.Updated, ev.Changes.Deleted
	} else {
		cs.IDsOmitted = true
	}
	if _, err := b.conn.PublishChangeSet(ctx, cs); err != nil {
		b.backlog.add(ev.Table, s)
		return err
	}
	return nil
}

// PublishRefreshed publishes a refresh notification.
func (b *Bus) PublishRefreshed(ctx context.Context, n daemon.Notification) error {
	return b.conn.PublishRefresh(ctx, &stream.RefreshNotification{
		Schema: n.Schema, View: n.View, Source: n.Source, Mode: n.Mode, RowsWritten: n.RowsWritten,
		SourceVersion: n.SourceVersion, Version: n.Version, LagMS: n.LagMS, CommittedAt: n.CommittedAt, Error: n.Error,
	})
}

// Close drains the connection and stops the embedded server.
func (b *Bus) Close() error {
	if b.stop != nil {
		b.stop()
		<-b.stopped
		b.stop = nil
	}
	if n := b.backlog.pending(); n > 0 {
		b.log.Info("stopping with change sets not published (the views were refreshed from the source)", "spans", n)
	}
	var errs []error
	if b.conn != nil {
		errs = append(errs, b.conn.Drain(context.Background()))
		b.conn = nil
	}
	if b.srv != nil {
		errs = append(errs, b.srv.Shutdown(context.Background()))
		b.srv = nil
	}
	return errors.Join(errs...)
}
