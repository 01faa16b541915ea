package stream

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strings"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// ServerConfig configures an embedded nats-server.
type ServerConfig struct {
	// StoreDir holds the JetStream store (the daemon uses DIR/.mvd/nats/).
	// It is created if missing. Required.
	StoreDir string
	// Host is the listen address; it must be a loopback address (default
	// "127.0.0.1"): the embedded server is for processes on this machine.
	Host string
	// Port is the listen port; 0 picks a free one.
	Port int
	// Token is the client token; empty generates 32 random bytes (hex).
	// Pass the previous token to restart a server other processes know.
	Token string
	// MaxPayload caps one message in bytes; 0 keeps the server default
	// (1 MiB).
	MaxPayload int32
	// MaxStore caps JetStream's file storage in bytes (0: DefaultMaxStore;
	// -1: the server chooses, 75% of the disk's free space at start, which
	// is too little for the streams on a nearly full disk).
	MaxStore int64
	// MaxMemory caps JetStream's memory storage (0: the server chooses).
	MaxMemory int64
	// StartTimeout bounds the start, the store's check included (default
	// 30s). A store that cannot be opened or read in time is moved aside
	// (StoreDir.corrupt-TIMESTAMP) and the server starts on a new one.
	StartTimeout time.Duration
	// Logger receives the server's log; nil discards it. Server notices
	// are logged at Debug.
	Logger *slog.Logger
}

// DefaultMaxStore is the embedded server's JetStream file store cap: the
// default streams (DefaultChangeSetMaxBytes + DefaultRefreshMaxBytes) fit
// in it, and it fits on a disk with 300 MB free. A set cap does not depend
// on the free space at start, so a daemon whose disk filled restarts.
const DefaultMaxStore int64 = 256 << 20

// Server is an embedded, in-process nats-server with JetStream.
//
// Its methods are safe for concurrent use. The server runs its own
// goroutines until Shutdown; the owner must call Shutdown.
type Server struct {
	ns    *server.Server
	token string
	host  string
	port  int
}

// startOnce is one attempt of StartServer: the server is started and
// waited for until ctx ends; errors of the store wrap errStore.
func startOnce(ctx context.Context, cfg ServerConfig) (*Server, error) {
	if cfg.StoreDir == "" {
		return nil, errors.New("stream: embedded server needs a store directory")
	}
	host := cfg.Host
	if host == "" {
		host = "127.0.0.1"
	}
	if !isLoopback(host) {
		return nil, fmt.Errorf("stream: embedded server host %q is not a loopback address", host)
	}
	if cfg.Port < 0 || cfg.Port > 65535 {
		return nil, fmt.Errorf("stream: embedded server port %d is out of range", cfg.Port)
	}
	if err := os.MkdirAll(cfg.StoreDir, 0o700); err != nil {
		return nil, fmt.Errorf("stream: create store dir: %w", err)
	}
	token, err := tokenOr(cfg.Token)
	if err != nil {
		return nil, err
	}
	port := cfg.Port
	if port == 0 {
		port = server.RANDOM_PORT
	}
	switch {
	case cfg.MaxStore == 0:
		cfg.MaxStore = DefaultMaxStore
	case cfg.MaxStore < 0:
		cfg.MaxStore = 0 // the server's own choice
	}
	opts := &server.Options{
		ServerName:         "mvd-embedded",
		Host:               host,
		Port:               port,
		Authorization:      token,
		JetStream:          true,
		StoreDir:           cfg.StoreDir,
		JetStreamMaxStore:  cfg.MaxStore,
		JetStreamMaxMemory: cfg.MaxMemory,
		MaxPayload:         cfg.MaxPayload,
		NoSigs:             true, // the daemon owns the signals
		HTTPPort:           0,    // no monitoring listener
	}
	ns, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("stream: configure embedded server: %w", err)
	}
	fatal := make(chan string, 1)
	ns.SetLoggerV2(serverLogger{l: orDiscard(cfg.Logger), fatal: fatal}, cfg.Logger != nil, false, false)
	// Start restores JetStream's streams before it returns: on a damaged
	// store that can take forever, so it runs aside and ctx bounds it.
	go ns.Start()
	if err := awaitServer(ctx, ns, fatal, fmt.Sprintf("%s:%d", host, cfg.Port)); err != nil {
		return nil, err
	}
	if !ns.JetStreamEnabled() {
		ns.Shutdown()
		ns.WaitForShutdown()
		return nil, fmt.Errorf("stream: embedded server started without JetStream (store %s): %w", cfg.StoreDir, errStore)
	}
	addr, ok := ns.Addr().(*net.TCPAddr)
	if !ok {
		ns.Shutdown()
		ns.WaitForShutdown()
		return nil, errors.New("stream: embedded server has no TCP address")
	}
	return &Server{ns: ns, token: token, host: host, port: addr.Port}, nil
}

// awaitServer waits until ns accepts clients, a fatal error is logged
// (returned; a JetStream one wraps errStore) or ctx ends.
func awaitServer(ctx context.Context, ns *server.Server, fatal <-chan string, addr string) error {
	// ReadyForConnections polls internally with a deadline; short slices
	// let ctx and fatal errors interrupt it.
	for !ns.ReadyForConnections(20 * time.Millisecond) {
		select {
		case msg := <-fatal:
			ns.Shutdown()
			ns.WaitForShutdown()
			err := fmt.Errorf("stream: embedded server on %s: %s", addr, msg)
			if strings.Contains(msg, "JetStream") { // the store, not the listener
				err = fmt.Errorf("%w: %w", err, errStore)
			}
			return err
		default:
		}
		if err := ctx.Err(); err != nil {
			go ns.Shutdown() // a Start stuck in the store may never let it finish
			return fmt.Errorf("stream: embedded server not ready: %w: %w", errStore, err)
		}
	}
	return nil
}

// tokenOr returns token, or a new random one (32 bytes, hex) if empty.
func tokenOr(token string) (string, error) {
	if token != "" {
		return token, nil
	}
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("stream: generate token: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

// URL is the client URL, "nats://127.0.0.1:PORT".
func (s *Server) URL() string {
	return fmt.Sprintf("nats://%s", net.JoinHostPort(s.host, fmt.Sprint(s.port)))
}

// Port is the port the server listens on (useful with Port 0).
func (s *Server) Port() int { return s.port }

// Token is the token clients must present.
func (s *Server) Token() string { return s.token }

// ConnectOptions returns options for a client in this process: an
// in-process connection (no TCP) with the token. Such a connection lives
// and dies with this Server (it cannot reconnect to a restarted one); use
// URL and Token for clients that must outlive it.
func (s *Server) ConnectOptions() ConnectOptions {
	return ConnectOptions{URL: s.URL(), Token: s.token, inProcess: s.ns}
}

// Shutdown stops the server: client connections are closed and the
// JetStream store is flushed. It returns when the server has stopped or
// ctx ends (the shutdown then completes in the background).
func (s *Server) Shutdown(ctx context.Context) error {
	done := make(chan struct{})
	go func() {
		s.ns.Shutdown()
		s.ns.WaitForShutdown()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("stream: shut down embedded server: %w", ctx.Err())
	}
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
