package wire

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"
)

// natsServer builds the nats-server command from the module in go.mod
// (once per test binary run) and starts it with JetStream on a loopback
// port, token auth and its own store; it is killed with the test. It
// returns the URL with the token, as --nats-url takes it.
func natsServer(t *testing.T) string {
	t.Helper()
	bin, err := natsServerBinary(t)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	const token = "s3cret-token"
	var log bytes.Buffer
	cmd := exec.Command(bin, "-a", "127.0.0.1", "-p", fmt.Sprint(port), "-js", "-sd", t.TempDir(), "--auth", token)
	cmd.Stderr = &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("nats-server did not listen:\n%s", log.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	return fmt.Sprintf("nats://%s@127.0.0.1:%d", token, port)
}

var (
	natsBinOnce sync.Once
	natsBin     string
	natsBinErr  error
)

func natsServerBinary(t *testing.T) (string, error) {
	natsBinOnce.Do(func() {
		dir, err := os.MkdirTemp("", "mvd-wire-nats-")
		if err != nil {
			natsBinErr = err
			return
		}
		natsBin = filepath.Join(dir, "nats-server")
		out, err := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "build", "-o", natsBin, "github.com/nats-io/nats-server/v2").CombinedOutput()
		if err != nil {
			natsBinErr = fmt.Errorf("go build nats-server: %v\n%s", err, out)
		}
	})
	return natsBin, natsBinErr
}

func TestMain(m *testing.M) {
	code := m.Run()
	if natsBin != "" {
		os.RemoveAll(filepath.Dir(natsBin))
	}
	os.Exit(code)
}
