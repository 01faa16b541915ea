package wire

import (
	"context"
	"errors"
	"log/slog"
	"net/url"
	"path/filepath"
	"strconv"

	"github.com/mvd-project/mvd/daemon"
	"github.com/mvd-project/mvd/message"
	"github.com/mvd-project/mvd/serveinfo"
	"github.com/mvd-project/mvd/stream"
)

// Bus is the daemon's Bus over package stream: an embedded nats-server
// (the default) or an external server or cluster.
type Bus struct {
	cfg  daemon.Config
	log  *slog.Logger
	srv  *stream.Server
	conn *stream.Conn
}

var (
	_ daemon.Bus             = (*Bus)(nil)
	_ daemon.NotificationLog = (*Bus)(nil)
)

// NewBus returns a Bus for the configuration; nothing starts until Start.
func NewBus(cfg daemon.Config, log *slog.Logger) *Bus {
	return &Bus{cfg: cfg, log: log}
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
		sc.MaxStore, _, _ = b.cfg.NATSLimits()
		if prev, err := serveinfo.Read(b.cfg.StateDir); err == nil {
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
		opts = externalOptions(b.cfg)
		natsURL = b.cfg.NATSURL
	}
	opts.Name, opts.Logger = "mvd serve", b.log
	opts.Subjects = stream.Subjects{Prefix: b.cfg.SubjectPrefix}
	_, opts.Streams.MaxBytes, opts.Streams.RefreshMaxBytes = b.cfg.NATSLimits()
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
	return natsURL, token, nil
}

// externalOptions connect to the NATS server or cluster of --nats-url (a
// comma-separated list of a cluster's URLs: the client reconnects to
// another node when it loses one) under the database's subject prefix.
func externalOptions(cfg daemon.Config) stream.ConnectOptions {
	return stream.ConnectOptions{URL: cfg.NATSURL, CredsFile: cfg.NATSCreds,
		TLS:      stream.TLSOptions{CAFile: cfg.NATSTLSCA, CertFile: cfg.NATSTLSCert, KeyFile: cfg.NATSTLSKey},
		Subjects: stream.Subjects{Prefix: cfg.SubjectPrefix}}
}

// PublishChange publishes a change set, failing at once while NATS is
// away (the daemon keeps the span and republishes it).
func (b *Bus) PublishChange(ctx context.Context, cs *message.ChangeSet) error {
	if b.conn == nil {
		return errNotStarted
	}
	_, err := b.conn.PublishChangeSet(ctx, cs)
	return err
}

// PublishRefreshed publishes a refresh notification.
func (b *Bus) PublishRefreshed(ctx context.Context, n *message.Notification) error {
	if b.conn == nil {
		return errNotStarted
	}
	return b.conn.PublishRefresh(ctx, n)
}

// LastNotification is the newest notification the refresh stream keeps
// for view (nil: none).
func (b *Bus) LastNotification(ctx context.Context, view string) (*message.Notification, error) {
	if b.conn == nil {
		return nil, errNotStarted
	}
	return b.conn.LastRefresh(ctx, view)
}

// errNotStarted is returned while the bus has no connection.
var errNotStarted = errors.New("NATS is not started")

// Close drains the connection and stops the embedded server.
func (b *Bus) Close() error {
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
