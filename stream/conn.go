package stream

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// ErrUnavailable is wrapped by errors that come from NATS being
// unreachable: a failed connect, a publish or fetch while disconnected, a
// publish whose acknowledgement did not arrive in time.
var ErrUnavailable = errors.New("stream: NATS unavailable")

// ErrUnauthorized is wrapped by Connect when the server refuses the
// credentials (a missing or wrong token, bad creds).
var ErrUnauthorized = errors.New("stream: NATS refused the credentials")

// TLSOptions configure TLS to an external server. Empty fields are unused.
type TLSOptions struct {
	// CAFile is a PEM bundle of the CAs that sign the server certificate.
	CAFile string
	// CertFile and KeyFile are the client certificate and key (mutual
	// TLS); both or neither.
	CertFile, KeyFile string
}

// StreamOptions shape the streams EnsureStreams creates or updates.
type StreamOptions struct {
	// Replicas is the replication factor of the streams and key-value
	// buckets; 0 (the default) means min(MaxReplicas, the cluster's size),
	// 1 on a server not in a cluster: see Conn.Replicas.
	Replicas int
	// MaxAge bounds how long change sets are kept (default 24h). A view
	// that falls further behind computes its changes from the source.
	MaxAge time.Duration
	// MaxBytes bounds the change-set stream's size (default
	// DefaultChangeSetMaxBytes; -1 for no limit). The oldest messages go
	// first. JetStream reserves it in the server's store up front.
	MaxBytes int64
	// DuplicateWindow is how long the server remembers Nats-Msg-Id values
	// to drop republished change sets (default 10m).
	DuplicateWindow time.Duration
	// RefreshPerView is how many refresh notifications are kept per view
	// (default 100); RefreshMaxAge how long (default 24h).
	RefreshPerView int64
	RefreshMaxAge  time.Duration
	// RefreshMaxBytes bounds the refresh stream's size (default
	// DefaultRefreshMaxBytes; -1 for no limit), reserved as MaxBytes is.
	RefreshMaxBytes int64
}

// Default stream sizes: together (192 MiB) they fit in DefaultMaxStore,
// so that the streams can be created on a small disk (JetStream reserves
// a stream's MaxBytes when it is created and refuses one that does not
// fit: "insufficient storage resources available").
const (
	DefaultChangeSetMaxBytes int64 = 128 << 20
	DefaultRefreshMaxBytes   int64 = 64 << 20
)

func (o StreamOptions) withDefaults() StreamOptions {
	if o.MaxAge == 0 {
		o.MaxAge = 24 * time.Hour
	}
	if o.MaxBytes == 0 {
		o.MaxBytes = DefaultChangeSetMaxBytes
	}
	if o.RefreshMaxBytes == 0 {
		o.RefreshMaxBytes = DefaultRefreshMaxBytes
	}
	if o.DuplicateWindow == 0 {
		o.DuplicateWindow = 10 * time.Minute
	}
	if o.RefreshPerView == 0 {
		o.RefreshPerView = 100
	}
	if o.RefreshMaxAge == 0 {
		o.RefreshMaxAge = 24 * time.Hour
	}
	return o
}

// ConnectOptions say where and how to connect.
type ConnectOptions struct {
	// URL is one server URL or a comma-separated list of a cluster's
	// ("nats://host:4222,tls://host2:4222"). Required.
	URL string
	// Token authenticates with a token (the embedded server's).
	Token string
	// CredsFile is a NATS credentials file (JWT + nkey seed).
	CredsFile string
	// TLS configures TLS; a tls:// URL or a CA turns it on.
	TLS TLSOptions
	// Name is the client name servers show in their monitoring.
	Name string
	// Subjects sets the subject prefix (default "mvd").
	Subjects Subjects
	// Streams shape the streams EnsureStreams creates.
	Streams StreamOptions
	// ReconnectWait is the pause between reconnect attempts (default
	// 250ms). The client reconnects forever.
	ReconnectWait time.Duration
	// PublishTimeout bounds a publish whose context has no deadline
	// (default 2s).
	PublishTimeout time.Duration
	// Logger receives connection events (disconnects, reconnects,
	// asynchronous errors); nil discards them.
	Logger *slog.Logger

	inProcess *server.Server
}

// Conn is a client connection with JetStream. It reconnects by itself
// after a server restart or a network failure, re-establishing its
// subscriptions.
//
// A Conn is safe for concurrent use by many goroutines. The goroutines the
// NATS client runs end with Close.
type Conn struct {
	nc      *nats.Conn
	js      jetstream.JetStream
	subj    Subjects
	streams StreamOptions
	pubWait time.Duration
	log     *slog.Logger
	closed  chan struct{} // closed by the client when the connection closes
}

// Connect connects to the server(s) in o.URL. It fails at once, wrapping
// ErrUnavailable or ErrUnauthorized, if no server can be reached or the
// credentials are refused: a daemon should not start without NATS. Once
// connected, the Conn reconnects forever.
func Connect(ctx context.Context, o ConnectOptions) (*Conn, error) {
	if o.URL == "" && o.inProcess == nil {
		return nil, errors.New("stream: no NATS URL")
	}
	if err := o.Subjects.validate(); err != nil {
		return nil, err
	}
	if (o.TLS.CertFile == "") != (o.TLS.KeyFile == "") {
		return nil, errors.New("stream: a TLS client certificate needs both a cert and a key file")
	}
	if o.ReconnectWait <= 0 {
		o.ReconnectWait = 250 * time.Millisecond
	}
	if o.PublishTimeout <= 0 {
		o.PublishTimeout = 2 * time.Second
	}
	log := orDiscard(o.Logger)
	closed := make(chan struct{})
	nopts := natsOptions(ctx, o, log, closed)
	type result struct {
		nc  *nats.Conn
		err error
	}
	done := make(chan result, 1)
	go func() {
		nc, err := nats.Connect(o.URL, nopts...)
		done <- result{nc, err}
	}()
	var r result
	select {
	case r = <-done:
	case <-ctx.Done():
		go func() { // the dial ends within timeout; close what it made
			if r := <-done; r.nc != nil {
				r.nc.Close()
			}
		}()
		return nil, fmt.Errorf("%w: connect to %s: %w", ErrUnavailable, redact(o.URL), ctx.Err())
	}
	if r.err != nil {
		if errors.Is(r.err, nats.ErrAuthorization) || errors.Is(r.err, nats.ErrAuthExpired) ||
			errors.Is(r.err, nats.ErrAuthRevoked) || strings.Contains(strings.ToLower(r.err.Error()), "authorization") {
			return nil, fmt.Errorf("%w: connect to %s: %w", ErrUnauthorized, redact(o.URL), r.err)
		}
		return nil, fmt.Errorf("%w: connect to %s: %w", ErrUnavailable, redact(o.URL), r.err)
	}
	js, err := jetstream.New(r.nc)
	if err != nil {
		r.nc.Close()
		return nil, fmt.Errorf("stream: JetStream context: %w", err)
	}
	return &Conn{nc: r.nc, js: js, subj: o.Subjects, streams: o.Streams.withDefaults(), pubWait: o.PublishTimeout, log: log, closed: closed}, nil
}

// natsOptions are the client options of o: reconnecting forever, with
// connection events logged to log and closed closed once the connection
// is. The dial timeout is 5s or what is left of ctx, if less.
func natsOptions(ctx context.Context, o ConnectOptions, log *slog.Logger, closed chan struct{}) []nats.Option {
	var closeOnce sync.Once
	timeout := 5 * time.Second
	if d, ok := ctx.Deadline(); ok && time.Until(d) < timeout {
		timeout = max(time.Until(d), time.Millisecond)
	}
	nopts := []nats.Option{
		nats.Name(o.Name),
		nats.Timeout(timeout),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(o.ReconnectWait),
		nats.ReconnectJitter(o.ReconnectWait/5, o.ReconnectWait/5),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			if err == nil { // our own Close or Drain: not news
				log.Debug("NATS connection closed")
				return
			}
			log.Warn("NATS disconnected", "err", err)
		}),
		nats.ReconnectHandler(func(nc *nats.Conn) {
			log.Info("NATS reconnected", "url", redact(nc.ConnectedUrl()))
		}),
		nats.ClosedHandler(func(*nats.Conn) { closeOnce.Do(func() { close(closed) }) }),
		nats.ErrorHandler(func(_ *nats.Conn, sub *nats.Subscription, err error) {
			subject := ""
			if sub != nil {
				subject = sub.Subject
			}
			log.Warn("NATS asynchronous error", "subject", subject, "err", err)
		}),
	}
	if o.Token != "" {
		nopts = append(nopts, nats.Token(o.Token))
	}
	if o.CredsFile != "" {
		nopts = append(nopts, nats.UserCredentials(o.CredsFile))
	}
	if o.TLS.CAFile != "" {
		nopts = append(nopts, nats.RootCAs(o.TLS.CAFile))
	}
	if o.TLS.CertFile != "" {
		nopts = append(nopts, nats.ClientCert(o.TLS.CertFile, o.TLS.KeyFile))
	}
	if o.inProcess != nil {
		nopts = append(nopts, nats.InProcessServer(o.inProcess))
	}
	return nopts
}

// RedactURL is url (one or a comma-separated list) with the user info of
// each URL (a token, a user and password) replaced by ***, for logs and
// error messages.
func RedactURL(url string) string { return redact(url) }

// redact drops user info from URLs for error messages.
func redact(url string) string {
	parts := strings.Split(url, ",")
	for i, p := range parts {
		if at := strings.LastIndex(p, "@"); at >= 0 {
			if scheme := strings.Index(p, "://"); scheme >= 0 && scheme < at {
				parts[i] = p[:scheme+3] + "***" + p[at:]
			}
		}
	}
	return strings.Join(parts, ",")
}

// Close closes the connection at once; pending acknowledgements and
// publishes in flight fail. Safe to call more than once.
func (c *Conn) Close() { c.nc.Close() }

// Drain lets subscriptions finish the messages they hold, then closes
// the connection; it returns when done or when ctx ends.
func (c *Conn) Drain(ctx context.Context) error {
	if err := c.nc.Drain(); err != nil {
		return fmt.Errorf("stream: drain: %w", err)
	}
	select {
	case <-c.closed:
		return nil
	case <-ctx.Done():
		c.nc.Close()
		return fmt.Errorf("stream: drain: %w", ctx.Err())
	}
}

// Connected reports whether the connection is up right now.
func (c *Conn) Connected() bool { return c.nc.IsConnected() }

// Subjects returns the naming this connection uses.
func (c *Conn) Subjects() Subjects { return c.subj }

// ConnectedURL is the URL of the server currently connected (no
// credentials), or "" while disconnected.
func (c *Conn) ConnectedURL() string { return redact(c.nc.ConnectedUrl()) }

// EnsureStreams creates the change-set and refresh streams, or updates
// them to the configured limits, with Replicas replicas (3 on a cluster of
// three or more nodes). The daemon calls it once after Connect;
// mere subscribers need not.
func (c *Conn) EnsureStreams(ctx context.Context) error {
	o := c.streams
	cfgs := []jetstream.StreamConfig{{
		Name:        c.subj.ChangeSetStream(),
		Description: "mvd change sets, one message per source version range",
		Subjects:    []string{c.subj.AllChangeSets()},
		Retention:   jetstream.LimitsPolicy,
		MaxAge:      o.MaxAge,
		MaxBytes:    o.MaxBytes,
		Discard:     jetstream.DiscardOld,
		Storage:     jetstream.FileStorage,
		Duplicates:  o.DuplicateWindow,
	}, {
		Name:              c.subj.RefreshStream(),
		Description:       "mvd refresh notifications, the latest per view",
		Subjects:          []string{c.subj.prefix() + ".view.>"},
		Retention:         jetstream.LimitsPolicy,
		MaxAge:            o.RefreshMaxAge,
		MaxBytes:          o.RefreshMaxBytes,
		MaxMsgsPerSubject: o.RefreshPerView,
		Discard:           jetstream.DiscardOld,
		Storage:           jetstream.FileStorage,
	}}
	for _, cfg := range cfgs {
		if err := c.ensureStream(ctx, cfg); err != nil {
			return err
		}
	}
	return nil
}

// ensureAttempts and ensureAttemptWait bound EnsureStreams' tries of one
// stream. A cluster asked by several clients at once to create the same
// replicated stream creates it but may answer none of them (three `mvd
// serve` started together on a fresh 3-node cluster all failed on it), so
// a try that times out is made again: the next finds the stream.
const (
	ensureAttempts    = 8
	ensureAttemptWait = 2 * time.Second
)

// attemptWait bounds try i (from 0) of an ensure: ensureAttemptWait,
// doubling up to 8 times it, so that a loaded cluster that answers slowly
// but surely is still waited for.
func attemptWait(i int) time.Duration { return ensureAttemptWait << min(i, 3) }

// tryAnswered runs try under a context bounded by attemptWait, and again,
// up to ensureAttempts times, while the server leaves it unanswered (the
// try's context ran out, not ctx): the ensures of streams, buckets and
// consumers all meet clusters that create without answering.
func tryAnswered[T any](ctx context.Context, try func(context.Context) (T, error)) (T, error) {
	var (
		v   T
		err error
	)
	for i := range ensureAttempts {
		tctx, cancel := context.WithTimeout(ctx, attemptWait(i))
		v, err = try(tctx)
		cancel()
		if err == nil || ctx.Err() != nil || !errors.Is(err, context.DeadlineExceeded) {
			break
		}
	}
	return v, err
}

// ensureStream creates stream cfg or updates it, with the replicas
// streamReplicas says, trying again when the server leaves a request
// unanswered.
func (c *Conn) ensureStream(ctx context.Context, cfg jetstream.StreamConfig) error {
	_, err := tryAnswered(ctx, func(ctx context.Context) (struct{}, error) {
		return struct{}{}, c.ensureStreamOnce(ctx, cfg)
	})
	return err
}

// ensureStreamOnce is one try of ensureStream.
func (c *Conn) ensureStreamOnce(ctx context.Context, cfg jetstream.StreamConfig) error {
	r, existing, err := c.streamReplicas(ctx, cfg.Name)
	if err != nil {
		return err
	}
	cfg.Replicas, err = c.createReplicated(r, existing, func(n int) error {
		cfg.Replicas = n
		_, err := c.js.CreateOrUpdateStream(ctx, cfg)
		return err
	})
	if err != nil {
		return c.classify(fmt.Errorf("stream: create or update stream %s (%d replicas): %w", cfg.Name, cfg.Replicas, err))
	}
	return nil
}

// classify marks err as ErrUnavailable when the connection is down or the
// server did not answer.
func (c *Conn) classify(err error) error {
	if err == nil || errors.Is(err, ErrUnavailable) {
		return err
	}
	if !c.nc.IsConnected() || errors.Is(err, nats.ErrTimeout) || errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, nats.ErrNoResponders) || errors.Is(err, jetstream.ErrNoStreamResponse) ||
		errors.Is(err, nats.ErrConnectionClosed) || errors.Is(err, nats.ErrConnectionReconnecting) ||
		errors.Is(err, jetstream.ErrJetStreamNotEnabled) || errors.Is(err, jetstream.ErrServerShutdown) ||
		errors.Is(err, jetstream.ErrNoHeartbeat) || errors.Is(err, jetstream.ErrConsumerLeadershipChanged) ||
		isClusterUnavailable(err) {
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	return err
}

// isClusterUnavailable reports a JetStream API error that means no leader
// can answer right now (a node of the cluster lost, an election under
// way), which passes by itself.
func isClusterUnavailable(err error) bool {
	var apiErr *jetstream.APIError
	if !errors.As(err, &apiErr) {
		return false
	}
	return apiErr.Code == 503 || apiErr.ErrorCode == jsClusterNotAvailable
}

// jsClusterNotAvailable is nats-server's JSClusterNotAvailErr ("JetStream
// system temporarily unavailable"), which the client library does not name.
const jsClusterNotAvailable jetstream.ErrorCode = 10008

// flush is a round trip to the server: everything sent before it has been
// processed when it returns. nats.go insists on a deadline, so a context
// without one gets PublishTimeout.
func (c *Conn) flush(ctx context.Context) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.pubWait)
		defer cancel()
	}
	return c.nc.FlushWithContext(ctx)
}
