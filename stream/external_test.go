package stream

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/mvd-project/mvd/internal/natstest"
)

// natsServerBinary is the nats-server command built from the module in
// go.mod (natstest builds it once per version and machine).
func natsServerBinary() (string, error) { return natstest.Binary() }

// externalServer runs a nats-server process with JetStream on a loopback
// port and store dir; it is killed with the test.
type externalServer struct {
	url, token, store string
	port              int
	cmd               *exec.Cmd
	exited            chan struct{}
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func startExternal(t *testing.T, store string, port int, token string) *externalServer {
	t.Helper()
	return startExternalWith(t, store, port, token, TLSOptions{})
}

// startExternalWith starts the server with extra flags; with tls set the
// readiness probe connects over TLS with those options.
func startExternalWith(t *testing.T, store string, port int, token string, tls TLSOptions, extra ...string) *externalServer {
	t.Helper()
	url := fmt.Sprintf("nats://127.0.0.1:%d", port)
	if tls.CAFile != "" {
		url = fmt.Sprintf("tls://127.0.0.1:%d", port)
	}
	args := append([]string{"-a", "127.0.0.1", "-p", fmt.Sprint(port), "-js", "-sd", store, "--auth", token}, extra...)
	e := launchExternal(t, args, ConnectOptions{URL: url, Token: token, TLS: tls})
	e.store, e.port, e.token = store, port, token
	return e
}

// launchExternal runs nats-server with args and waits until a client with
// probe options gets through to the JetStream API.
func launchExternal(t *testing.T, args []string, probe ConnectOptions) *externalServer {
	t.Helper()
	bin, err := natsServerBinary()
	if err != nil {
		t.Fatal(err)
	}
	e := &externalServer{url: probe.URL, exited: make(chan struct{})}
	e.cmd = exec.Command(bin, args...)
	log := &lockedBuffer{}
	e.cmd.Stderr = log
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("nats-server log:\n%s", log.String())
		}
	})
	if err := e.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = e.cmd.Wait(); close(e.exited) }()
	t.Cleanup(e.stop)
	deadline := time.Now().Add(15 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(testCtx(t), time.Second)
		c, err := Connect(ctx, probe)
		if err == nil {
			_, err = c.js.AccountInfo(ctx)
			c.Close()
		}
		cancel()
		if err == nil {
			return e
		}
		select {
		case <-e.exited:
			t.Fatalf("nats-server exited at start: %v", e.cmd.ProcessState)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("nats-server not ready: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (e *externalServer) stop() {
	_ = e.cmd.Process.Signal(os.Interrupt)
	select {
	case <-e.exited:
	case <-time.After(10 * time.Second):
		_ = e.cmd.Process.Kill()
		<-e.exited
	}
}

// lockedBuffer collects a process's output for the failure log.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func TestExternalServer(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a nats-server process")
	}
	store := t.TempDir()
	e := startExternal(t, store, freePort(t), "secret-token")
	ctx := testCtx(t)
	o := ConnectOptions{URL: e.url, Token: e.token, ReconnectWait: 20 * time.Millisecond}
	daemon := connect(t, o)
	subscriber := connect(t, o)
	if err := daemon.EnsureStreams(ctx); err != nil {
		t.Fatal(err)
	}
	vc, err := daemon.ViewConsumer(ctx, "v", "events", ConsumerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	sub, err := subscriber.SubscribeRefreshes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	publishSteps(t, daemon, 1, 4)
	if res, err := daemon.PublishChangeSet(ctx, step(1, []uint64{10}, nil, nil)); err != nil || !res.Duplicate {
		t.Fatalf("republish: %+v, %v", res, err)
	}
	waitReady(t, vc, 3)
	b, err := vc.Fetch(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	cs, ok := b.Coalesce(1, "inc1")
	if !ok || cs == nil || cs.To != 4 {
		t.Fatalf("coalesced: %+v, %v", cs, ok)
	}
	if err := b.Ack(ctx); err != nil {
		t.Fatal(err)
	}
	if err := daemon.PublishRefresh(ctx, refreshOf("v", 3)); err != nil {
		t.Fatal(err)
	}
	if n := next(t, sub, 5*time.Second); n.View != "v" || n.Version != 3 {
		t.Fatalf("notification: %+v", n)
	}

	// Restart the process on the same port and store: both clients come
	// back by themselves, the consumer keeps its position.
	e.stop()
	waitFor(t, "clients to notice", 5*time.Second, func() bool { return !daemon.Connected() && !subscriber.Connected() })
	startExternal(t, store, e.port, e.token)
	waitFor(t, "clients to reconnect", 10*time.Second, func() bool { return daemon.Connected() && subscriber.Connected() })
	publishSteps(t, daemon, 4, 5)
	b, err = vc.Fetch(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.ChangeSets) != 1 || b.ChangeSets[0].From != 4 {
		t.Fatalf("after restart: %d change sets from %d, want only 4..5", len(b.ChangeSets), b.ChangeSets[0].From)
	}
	_ = b.Ack(ctx)
	var got *RefreshNotification
	for version := uint64(4); got == nil; version++ {
		if err := daemon.PublishRefresh(ctx, refreshOf("v", version)); err != nil {
			t.Fatal(err)
		}
		short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
		got, _ = sub.Next(short)
		cancel()
		if version > 100 {
			t.Fatal("subscription did not come back")
		}
	}
}
