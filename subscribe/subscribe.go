// Package subscribe is `mvd subscribe`: it finds the running daemon of a
// database (DIR/.mvd/serve.json) or an explicit NATS server, subscribes to
// refresh notifications and prints one line per notification, reconnecting
// by itself when the daemon restarts.
package subscribe

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mvd-project/mvd/serveinfo"
	"github.com/mvd-project/mvd/stream"
)

// ErrNoDaemon is wrapped by Run when no daemon serves the database and no
// NATS URL was given.
var ErrNoDaemon = errors.New("no mvd serve is running")

// Options configure Run.
type Options struct {
	// DB is the database directory; its daemon is found through
	// StateDir/serve.json. Required unless NATSURL is set.
	DB string
	// StateDir is the daemon's state directory (default DB/.mvd, or for
	// an s3:// DB the one mvd serve derives: serveinfo.DefaultStateDir).
	StateDir string
	// NATSURL, CredsFile and TLS name a NATS server (the one an mvd serve
	// with --nats-url uses) instead of serve.json.
	NATSURL   string
	CredsFile string
	TLS       stream.TLSOptions
	// SubjectPrefix picks the database's subjects on a shared NATS
	// (docs/messages.md). Empty: serve.json's; with NATSURL, the prefix
	// mvd serve derives from DB (stream.PrefixFor of its absolute path)
	// when DB is given and no daemon of it runs, else "mvd".
	SubjectPrefix string
	// Views are the views to follow; none means every view, including
	// views created later.
	Views []string
	// KnownViews lists the views present now, for the first line when
	// Views is empty (nil: the line lists none).
	KnownViews func(ctx context.Context) ([]string, error)
	// JSON prints {"subscribed":[…]} first, then every notification as
	// its JSON message (docs/messages.md); otherwise one readable line per
	// notification on Out and status lines on Status.
	JSON bool
	// Wait waits for a daemon to start instead of failing with
	// ErrNoDaemon.
	Wait bool
	// Out receives the notification lines; each is written with one Write
	// call, and flushed if Out has a Flush method.
	Out io.Writer
	// Status receives human status lines ("mvd: …"): subscribed, daemon
	// lost, reconnected. Nil discards them.
	Status io.Writer
	// Poll is how often a lost daemon's serve.json is looked at again
	// (default 250ms).
	Poll time.Duration
}

// Subscribed is the first line printed with JSON.
type Subscribed struct {
	// Subscribed are the views named, or the views present at subscribe
	// time when following all views.
	Subscribed []string `json:"subscribed"`
	// All is true when following every view, including later ones.
	All bool `json:"all_views"`
}

// endpoint is where to connect.
type endpoint struct {
	url, token, prefix string
	pid                int
}

func (o *Options) stateDir() string {
	if o.StateDir != "" {
		return o.StateDir
	}
	if dir, err := serveinfo.DefaultStateDir(o.DB); err == nil {
		return dir
	}
	return "" // no cache directory: locate says to give --state-dir
}

// locate returns the daemon's endpoint from serve.json, or --nats-url.
func (o *Options) locate() (endpoint, error) {
	if o.NATSURL != "" {
		return endpoint{url: o.NATSURL, prefix: o.externalPrefix()}, nil
	}
	dir := o.stateDir()
	path := filepath.Join(dir, serveinfo.File)
	info, running, err := serveinfo.Running(dir)
	if err != nil {
		return endpoint{}, fmt.Errorf("look for mvd serve in %s: %w", dir, err)
	}
	if !running {
		why := path + " not found"
		if _, rerr := serveinfo.Read(dir); rerr == nil {
			why = path + " is stale: its daemon has exited"
		} else if !errors.Is(rerr, fs.ErrNotExist) {
			why = fmt.Sprintf("%s is unreadable or corrupt: %v", path, rerr)
		}
		hint := "start one with `mvd serve --db " + o.DB + "` or pass --nats-url"
		if serveinfo.IsRemote(o.DB) && o.StateDir == "" {
			// The state directory of an object-store database is local:
			// a daemon given its own --state-dir is found only there.
			hint = "start one with `mvd serve --db " + o.DB + "`, give the --state-dir the daemon was given, or pass --nats-url"
		}
		return endpoint{}, fmt.Errorf("%w for %s (%s); %s", ErrNoDaemon, o.DB, why, hint)
	}
	if info.NATSURL == "" {
		// Locked but serve.json not written yet: it is starting.
		return endpoint{}, fmt.Errorf("%w for %s yet (%s not found: it is starting); start one with `mvd serve --db %s` or pass --nats-url", ErrNoDaemon, o.DB, path, o.DB)
	}
	prefix := o.SubjectPrefix
	if prefix == "" {
		prefix = info.SubjectPrefix
	}
	return endpoint{url: info.NATSURL, token: info.Token, pid: info.PID, prefix: prefix}, nil
}

// externalPrefix is the subject prefix to use with --nats-url: the one
// given, the running daemon's (serve.json), the one mvd serve derives
// from the database, or "mvd" without a database.
func (o *Options) externalPrefix() string {
	if o.SubjectPrefix != "" || o.DB == "" {
		return o.SubjectPrefix
	}
	if info, running, err := serveinfo.Running(o.stateDir()); err == nil && running && info.SubjectPrefix != "" {
		return info.SubjectPrefix
	}
	if serveinfo.IsRemote(o.DB) {
		return stream.PrefixFor(serveinfo.CleanRemote(o.DB))
	}
	abs, err := filepath.Abs(o.DB)
	if err != nil {
		return ""
	}
	return stream.PrefixFor(abs)
}

// Run subscribes and prints until ctx ends (then it returns nil).
func Run(ctx context.Context, o Options) error {
	if o.DB == "" && o.NATSURL == "" {
		return errors.New("subscribe needs --db DIR or --nats-url URL")
	}
	if o.Poll <= 0 {
		o.Poll = 250 * time.Millisecond
	}
	if o.Status == nil {
		o.Status = io.Discard
	}
	if o.DB != "" && !serveinfo.IsRemote(o.DB) {
		// A wrong --db is not "no daemon runs".
		if st, err := os.Stat(o.DB); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("database directory %s does not exist", o.DB)
			}
			return fmt.Errorf("database directory %s: %w", o.DB, err)
		} else if !st.IsDir() {
			return fmt.Errorf("database %s is not a directory", o.DB)
		}
	}
	ep, err := o.locate()
	for err != nil && o.Wait && errors.Is(err, ErrNoDaemon) {
		if werr := sleep(ctx, o.Poll); werr != nil {
			return nil
		}
		ep, err = o.locate()
	}
	if err != nil {
		return err
	}
	started := time.Now()
	conn, sub, err := o.connect(ctx, ep, time.Time{})
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	r := &runner{o: &o, conn: conn, sub: sub, ep: ep, since: started, last: map[string]time.Time{}}
	defer func() { closeAll(r.conn, r.sub) }()
	if err := o.announce(ctx, ep); err != nil {
		return err
	}
	return r.loop(ctx)
}

// connect connects to ep and subscribes to new notifications, or (since
// not zero) to those from since on.
func (o *Options) connect(ctx context.Context, ep endpoint, since time.Time) (*stream.Conn, *stream.Subscription, error) {
	conn, err := stream.Connect(ctx, stream.ConnectOptions{URL: ep.url, Token: ep.token, CredsFile: o.CredsFile, TLS: o.TLS, Name: "mvd subscribe",
		Subjects: stream.Subjects{Prefix: ep.prefix}})
	if err != nil {
		return nil, nil, fmt.Errorf("connect to mvd serve's NATS at %s: %w", ep.url, err)
	}
	var sub *stream.Subscription
	if since.IsZero() {
		sub, err = conn.SubscribeRefreshes(ctx, o.Views...)
	} else {
		sub, err = conn.SubscribeRefreshesSince(ctx, since, o.Views...)
	}
	if err != nil {
		conn.Close()
		return nil, nil, fmt.Errorf("subscribe to refresh notifications at %s: %w", ep.url, err)
	}
	return conn, sub, nil
}

// announce prints the first line, once subscribed.
func (o *Options) announce(ctx context.Context, ep endpoint) error {
	names := append([]string(nil), o.Views...)
	all := len(o.Views) == 0
	if all && o.KnownViews != nil {
		known, err := o.KnownViews(ctx)
		if err != nil {
			fmt.Fprintf(o.Status, "mvd: cannot list the views of %s: %v\n", o.DB, err)
		}
		names = known
	}
	if names == nil {
		names = []string{}
	}
	if o.JSON {
		line, err := json.Marshal(Subscribed{Subscribed: names, All: all})
		if err != nil {
			return err
		}
		return o.emit(append(line, '\n'))
	}
	what := "views " + strings.Join(names, ", ")
	if all {
		what = "every view"
		if len(names) > 0 {
			what += " (now: " + strings.Join(names, ", ") + ")"
		}
	}
	who := ep.url
	if ep.pid != 0 {
		who = fmt.Sprintf("mvd serve (pid %d) at %s", ep.pid, ep.url)
	}
	fmt.Fprintf(o.Status, "mvd: subscribed to %s of %s; one line per refresh (Ctrl-C to stop)\n", what, who)
	return nil
}

// emit writes one line in one Write call and flushes it.
func (o *Options) emit(line []byte) error {
	if _, err := o.Out.Write(line); err != nil {
		return err
	}
	if f, ok := o.Out.(interface{ Flush() error }); ok {
		return f.Flush()
	}
	return nil
}

// runner is Run's state after the first subscription; one goroutine.
type runner struct {
	o    *Options
	conn *stream.Conn
	sub  *stream.Subscription
	ep   endpoint
	// since is where a new subscription resumes (the newest commit time
	// printed, or the first subscription's time); last is the newest
	// commit time printed per view, to drop what a resumed subscription
	// delivers again.
	since time.Time
	last  map[string]time.Time
	// quiet: the next reconnect was announced already.
	quiet bool
}

func (r *runner) loop(ctx context.Context) error {
	for {
		err := r.receive(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			return err
		}
		// The daemon came back elsewhere (another port or token): start
		// over with its new serve.json.
		if err := r.reconnect(ctx); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
	}
}

// receive prints notifications until ctx ends, an output error, or the
// daemon is found to have moved (returns nil then).
func (r *runner) receive(ctx context.Context) error {
	moved := make(chan struct{})
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	go r.watch(wctx, moved, stop)
	for {
		n, err := r.sub.Next(wctx)
		switch {
		case err == nil:
			if err := r.print(n); err != nil {
				return err
			}
		case errors.Is(err, stream.ErrBadMessage) || errors.Is(err, stream.ErrUnsupportedSchema):
			fmt.Fprintf(r.o.Status, "mvd: skipped a notification: %v\n", err)
		case wctx.Err() != nil:
			select {
			case <-moved:
				return nil
			default:
				return ctx.Err()
			}
		default:
			return err
		}
	}
}

// watch reports connection changes on Status and closes moved and calls
// stop (then returns) when the connection is down and serve.json names another
// endpoint. The NATS client itself reconnects to the same endpoint.
func (r *runner) watch(ctx context.Context, moved chan<- struct{}, stop context.CancelFunc) {
	t := time.NewTicker(r.o.Poll)
	defer t.Stop()
	up := true
	var downSince time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		connected := r.conn.Connected()
		switch {
		case up && !connected:
			up, downSince = false, time.Now()
			fmt.Fprintf(r.o.Status, "mvd: lost mvd serve at %s; reconnecting when it is back\n", r.ep.url)
		case !up && connected:
			fmt.Fprintf(r.o.Status, "mvd: reconnected to %s (down %s)\n", r.ep.url, time.Since(downSince).Round(time.Millisecond))
			// The server may have restarted and lost the tail of its
			// stream (a killed nats-server loses what it had not
			// flushed), so the ordered consumer's resume by stream
			// sequence could skip new notifications that reuse those
			// sequences. Subscribe again by commit time instead; print
			// drops what was printed before.
			r.quiet = true
			close(moved)
			stop()
			return
		}
		if up || r.o.NATSURL != "" {
			continue
		}
		if ep, err := r.o.locate(); err == nil && (ep.url != r.ep.url || ep.token != r.ep.token || ep.prefix != r.ep.prefix) {
			close(moved)
			stop()
			return
		}
	}
}

// reconnect replaces the connection with one to the daemon's current
// serve.json, waiting for it as long as ctx lasts.
func (r *runner) reconnect(ctx context.Context) error {
	closeAll(r.conn, r.sub)
	r.conn, r.sub = nil, nil
	for {
		ep, err := r.o.locate()
		if err == nil {
			conn, sub, cerr := r.o.connect(ctx, ep, r.since)
			if cerr == nil {
				r.conn, r.sub, r.ep = conn, sub, ep
				if !r.quiet {
					fmt.Fprintf(r.o.Status, "mvd: reconnected to mvd serve (pid %d) at %s\n", ep.pid, ep.url)
				}
				r.quiet = false
				return nil
			}
			err = cerr
		}
		if errors.Is(err, stream.ErrUnauthorized) {
			return err
		}
		if serr := sleep(ctx, r.o.Poll); serr != nil {
			return serr
		}
	}
}

// print writes one notification, unless printed before.
func (r *runner) print(n *stream.RefreshNotification) error {
	if prev, ok := r.last[n.View]; ok && !n.CommittedAt.After(prev) {
		return nil
	}
	r.last[n.View] = n.CommittedAt
	if n.CommittedAt.After(r.since) {
		r.since = n.CommittedAt
	}
	if r.o.JSON {
		line, err := stream.EncodeRefresh(n)
		if err != nil {
			return err
		}
		return r.o.emit(append(line, '\n'))
	}
	return r.o.emit([]byte(FormatText(n) + "\n"))
}

// FormatText is the readable line of a notification:
//
//	10:30:00.123 daily incremental: 1 row written, source v12 -> view v7, lag 3.1 ms
//	10:30:00.123 daily FAILED: <error> (view v7 still reflects source v12)
func FormatText(n *stream.RefreshNotification) string {
	at := n.CommittedAt.UTC().Format("15:04:05.000")
	if n.Error != "" {
		return fmt.Sprintf("%s %s FAILED: %s (view v%d still reflects source v%d)", at, n.View, oneLine(n.Error), n.Version, n.SourceVersion)
	}
	rows := "rows"
	if n.RowsWritten == 1 {
		rows = "row"
	}
	return fmt.Sprintf("%s %s %s: %d %s written, source v%d -> view v%d, lag %.1f ms",
		at, n.View, n.Mode, n.RowsWritten, rows, n.SourceVersion, n.Version, n.LagMS)
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

func closeAll(conn *stream.Conn, sub *stream.Subscription) {
	if sub != nil {
		_ = sub.Close()
	}
	if conn != nil {
		conn.Close()
	}
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
