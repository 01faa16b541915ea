package stream

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// errStore marks a start that failed in JetStream's store: not ready in
// time, JetStream not enabled, or a stream that cannot be read back.
var errStore = errors.New("JetStream store unusable")

// defaultStartTimeout bounds an embedded server's start and store check.
const defaultStartTimeout = 30 * time.Second

// StartServer starts an embedded server and returns once it accepts
// clients, JetStream is up and every stream in its store reads back, or
// when ctx ends (the server is then shut down again). JetStream is the
// daemon's wake-up, not its record: a store that cannot be opened or read
// within cfg.StartTimeout is moved aside, with a warning, and the server
// starts on a new, empty one (views catch up from their sources).
func StartServer(ctx context.Context, cfg ServerConfig) (*Server, error) {
	if cfg.StartTimeout <= 0 {
		cfg.StartTimeout = defaultStartTimeout
	}
	s, err := startChecked(ctx, cfg)
	if err == nil || !errors.Is(err, errStore) || ctx.Err() != nil {
		return s, err
	}
	aside := fmt.Sprintf("%s.corrupt-%s", cfg.StoreDir, time.Now().UTC().Format("20060102T150405.000000000"))
	if rerr := os.Rename(cfg.StoreDir, aside); rerr != nil {
		return nil, fmt.Errorf("%w (moving the store aside: %w)", err, rerr)
	}
	orDiscard(cfg.Logger).Warn("JetStream store unusable: moved aside, starting on a new one (views catch up from their sources)",
		"store", cfg.StoreDir, "moved_to", aside, "err", err)
	return startChecked(ctx, cfg)
}

// startChecked starts the server and checks its store, both within
// cfg.StartTimeout.
func startChecked(ctx context.Context, cfg ServerConfig) (*Server, error) {
	sctx, cancel := context.WithTimeout(ctx, cfg.StartTimeout)
	defer cancel()
	s, err := startOnce(sctx, cfg)
	if err != nil {
		return nil, err
	}
	if err := s.checkStore(sctx); err != nil {
		_ = s.Shutdown(sctx)
		return nil, fmt.Errorf("stream: embedded server store %s: %w: %w", cfg.StoreDir, errStore, err)
	}
	return s, nil
}

// checkStore reads the first and the last message of every stream back:
// a stream the server restored but cannot read (a damaged block it did
// not drop) fails here, within the start's deadline, rather than leaving
// a view's feed waiting forever. Two reads per stream: the check costs
// the same however large the store.
func (s *Server) checkStore(ctx context.Context) error {
	nc, err := nats.Connect(s.URL(), nats.Token(s.token), nats.InProcessServer(s.ns))
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	names := js.StreamNames(ctx)
	for name := range names.Name() {
		if err := readEnds(ctx, js, name); err != nil {
			return err
		}
	}
	return names.Err()
}

// readEnds reads stream name's first and last messages.
func readEnds(ctx context.Context, js jetstream.JetStream, name string) error {
	st, err := js.Stream(ctx, name)
	if err != nil {
		return fmt.Errorf("stream %s: %w", name, err)
	}
	state := st.CachedInfo().State
	if state.Msgs == 0 {
		return nil
	}
	for _, seq := range []uint64{state.FirstSeq, state.LastSeq} {
		if _, err := st.GetMsg(ctx, seq); err != nil && !errors.Is(err, jetstream.ErrMsgNotFound) {
			return fmt.Errorf("stream %s: read message %d: %w", name, seq, err)
		}
	}
	return nil
}
