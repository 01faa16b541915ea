package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/url"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mvd-project/mvd/internal/lancedbtest"
	"github.com/mvd-project/mvd/serveinfo"
	"github.com/mvd-project/mvd/stream"
	"github.com/mvd-project/mvd/subscribe"
)

// TestSubscribeNoDaemon: without a running daemon, one clear line, exit 1.
func TestSubscribeNoDaemon(t *testing.T) {
	dir := t.TempDir()
	code, stdout, stderr := runCLI("subscribe", "--db", dir)
	want := fmt.Sprintf("mvd: no mvd serve is running for %s (%s not found); start one with `mvd serve --db %s` or pass --nats-url\n",
		dir, filepath.Join(dir, ".mvd", "serve.json"), dir)
	if code != 1 || stdout != "" || stderr != want {
		t.Fatalf("code %d stdout %q stderr:\n%q\nwant\n%q", code, stdout, stderr, want)
	}
	if code, _, stderr := runCLI("subscribe"); code != 2 || !strings.Contains(stderr, "needs --db DIR") {
		t.Fatalf("no --db: code %d, %q", code, stderr)
	}
	if code, _, stderr := runCLI("subscribe", "--db", dir, "--view", "bad/name"); code != 2 ||
		stderr != "mvd: --view: invalid view name 'bad/name': names may contain only letters, digits, underscores, hyphens and periods\n" {
		t.Fatalf("--view bad/name: code %d, %q", code, stderr)
	}
	missing := filepath.Join(dir, "nope")
	if code, _, stderr := runCLI("subscribe", "--db", missing); code != 1 || stderr != "mvd: database directory "+missing+" does not exist\n" {
		t.Fatalf("--db %s: code %d, %q", missing, code, stderr)
	}
}

// lineReader collects a process's output lines.
type lineReader struct {
	lines chan string
}

func readLines(r io.Reader) *lineReader {
	lr := &lineReader{lines: make(chan string, 1024)}
	go func() {
		s := bufio.NewScanner(r)
		for s.Scan() {
			lr.lines <- s.Text()
		}
		close(lr.lines)
	}()
	return lr
}

func (lr *lineReader) next(t *testing.T, what string) string {
	t.Helper()
	select {
	case l, ok := <-lr.lines:
		if !ok {
			t.Fatalf("%s: output ended", what)
		}
		return l
	case <-time.After(60 * time.Second):
		t.Fatalf("%s: no line within 60s", what)
	}
	return ""
}

// notification reads lines until one for view at sourceVersion (unless
// already seen), checking
// that each line is a notification and that no (view, source version)
// repeats.
func (lr *lineReader) notification(t *testing.T, seen map[string]bool, view string, sourceVersion uint64) {
	t.Helper()
	if seen[fmt.Sprintf("%s@%d", view, sourceVersion)] {
		return
	}
	for {
		l := lr.next(t, fmt.Sprintf("notification of %s at source v%d", view, sourceVersion))
		var n struct {
			Schema        int    `json:"schema"`
			View          string `json:"view"`
			Mode          string `json:"mode"`
			SourceVersion uint64 `json:"source_version"`
			Version       uint64 `json:"version"`
			Error         string `json:"error"`
		}
		if err := json.Unmarshal([]byte(l), &n); err != nil || n.Schema != 1 || n.View == "" {
			t.Fatalf("not a notification line: %q (%v)", l, err)
		}
		if n.Error != "" {
			t.Fatalf("refresh failed: %s", l)
		}
		key := fmt.Sprintf("%s@%d", n.View, n.SourceVersion)
		if seen[key] && n.Mode != "no_op" {
			t.Fatalf("second notification of %s: %s", key, l)
		}
		seen[key] = true
		if n.View == view && n.SourceVersion == sourceVersion {
			return
		}
	}
}

// syncBuffer is a bytes.Buffer safe for a process writer and a reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestSubscribeServe runs `mvd serve` and `mvd subscribe --json` as
// processes while LanceDB writes: the first line lists the views, each
// refresh gives one line, --view filters, and the subscriber follows the
// daemon across two restarts: after a kill -9 (same port and token), and
// after a clean stop with the old port taken (another port and token,
// found in serve.json), without losing the notifications in between; and
// `mvd view alter` while the daemon runs switches big to manual and back.
func TestSubscribeServe(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	lancedbtest.Require(t)
	bin := mvdBinary(t)
	dir := t.TempDir()
	state := filepath.Join(dir, ".mvd")
	d := lancedbtest.StartDriver(t, dir)
	if _, err := d.CreateTable("src", lancedbtest.SourceSchema(), lancedbtest.SourceRows(0, 20, 0)); err != nil {
		t.Fatal(err)
	}
	if _, err := d.CreateView("all", "src", lancedbtest.ViewSpec{}); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runCLI("view", "create", "--db", dir, "big", "--source", "src", "--select", "id, amount", "--where", "amount >= 50"); code != 0 {
		t.Fatalf("view create: %s", stderr)
	}

	var serveLog *syncBuffer
	serve := func() (*exec.Cmd, serveinfo.Info) {
		t.Helper()
		stderr := &syncBuffer{}
		serveLog = stderr
		cmd := exec.Command(bin, "serve", "--db", dir, "--admin-addr", "127.0.0.1:0", "--log-level", "debug")
		cmd.Stderr = stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(60 * time.Second)
		for {
			if info, err := serveinfo.Read(state); err == nil && info.PID == cmd.Process.Pid {
				return cmd, info
			}
			if time.Now().After(deadline) {
				_ = cmd.Process.Kill()
				t.Fatalf("no serve.json; stderr:\n%s", stderr.String())
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	stop := func(cmd *exec.Cmd) {
		t.Helper()
		_ = cmd.Process.Signal(syscall.SIGTERM)
		if err := cmd.Wait(); err != nil {
			t.Errorf("serve exit: %v", err)
		}
	}
	t.Cleanup(func() {
		if t.Failed() && serveLog != nil {
			t.Logf("stderr of the last mvd serve:\n%s", serveLog.String())
		}
	})
	srv, info := serve()
	defer func() {
		if srv != nil {
			_ = srv.Process.Kill()
			_ = srv.Wait()
		}
	}()

	subscriber := func(args ...string) (*exec.Cmd, *lineReader, *syncBuffer) {
		t.Helper()
		cmd := exec.Command(bin, append([]string{"subscribe", "--db", dir}, args...)...)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		stderr := &syncBuffer{}
		cmd.Stderr = stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = cmd.Process.Signal(syscall.SIGINT)
			_ = cmd.Wait()
			if t.Failed() {
				t.Logf("stderr of mvd subscribe %s:\n%s", strings.Join(args, " "), stderr.String())
			}
		})
		return cmd, readLines(out), stderr
	}
	_, all, allErr := subscriber("--json")
	_, big, _ := subscriber("--json", "--view", "big")
	if first := all.next(t, "first line"); first != `{"subscribed":["all","big"],"all_views":true}` {
		t.Fatalf("first line without --view: %s", first)
	}
	if first := big.next(t, "first line"); first != `{"subscribed":["big"],"all_views":false}` {
		t.Fatalf("first line with --view big: %s", first)
	}

	seenAll, seenBig := map[string]bool{}, map[string]bool{}
	write := func(from, to int64) uint64 {
		t.Helper()
		v, err := d.Add("src", lancedbtest.SourceRows(from, to, 0))
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for i := range 3 {
		v := write(int64(100+10*i), int64(110+10*i))
		all.notification(t, seenAll, "all", v)
		all.notification(t, seenAll, "big", v)
		big.notification(t, seenBig, "big", v)
	}
	for k := range seenBig {
		if !strings.HasPrefix(k, "big@") {
			t.Fatalf("--view big printed %s", k)
		}
	}

	// A crash (serve.json stays): the new daemon takes the same port and
	// token, and the NATS client reconnects by itself.
	_ = srv.Process.Kill()
	_ = srv.Wait()
	srv, info2 := serve()
	if info2.NATSURL != info.NATSURL {
		t.Logf("restart moved NATS from %s to %s", info.NATSURL, info2.NATSURL)
	}
	v := write(200, 210)
	all.notification(t, seenAll, "all", v)
	big.notification(t, seenBig, "big", v)

	// Restart with the old port taken: a new port (and the subscriber
	// must find it in serve.json).
	stop(srv)
	u, err := url.Parse(info2.NATSURL)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:"+u.Port())
	if err != nil {
		t.Fatalf("hold the old NATS port: %v", err)
	}
	defer l.Close()
	srv, info3 := serve()
	if info3.NATSURL == info2.NATSURL {
		t.Fatalf("daemon reused a taken port: %s", info3.NATSURL)
	}
	v = write(300, 310)
	all.notification(t, seenAll, "all", v)
	big.notification(t, seenBig, "big", v)
	// stderr is read by its own goroutine: the reconnect line may land
	// after the notification that followed it on stdout.
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(allErr.String(), "reconnected"); {
		if time.Now().After(deadline) {
			t.Fatalf("subscriber stderr has no reconnect line:\n%s", allErr.String())
		}
		time.Sleep(5 * time.Millisecond)
	}

	// mvd view alter while the daemon runs: manual stops big's refreshes
	// (the next alter commit follows the first directly), on-commit brings
	// big up to date in one refresh.
	alter := func(mode string) uint64 {
		t.Helper()
		code, stdout, stderr := runCLI("view", "alter", "--db", dir, "big", "--auto-refresh", mode, "--json")
		var r struct{ Version uint64 }
		if code != 0 || json.Unmarshal([]byte(stdout), &r) != nil {
			t.Fatalf("view alter %s: exit %d: %s%s", mode, code, stdout, stderr)
		}
		want := `msg="view policy changed" view=big policy=` + mode
		deadline := time.Now().Add(30 * time.Second)
		for !strings.Contains(serveLog.String(), want) {
			if time.Now().After(deadline) {
				t.Fatalf("daemon did not log %s:\n%s", want, serveLog.String())
			}
			time.Sleep(5 * time.Millisecond)
		}
		return r.Version
	}
	manualAt := alter("manual")
	v = write(400, 410)
	all.notification(t, seenAll, "all", v)
	v = write(410, 420)
	all.notification(t, seenAll, "all", v)
	if back := alter("on-commit"); back != manualAt+1 {
		t.Errorf("view big committed versions %d..%d while manual", manualAt+1, back-1)
	}
	big.notification(t, seenBig, "big", v)
	if seenBig[fmt.Sprintf("big@%d", v-1)] {
		t.Errorf("big was refreshed to source v%d while manual", v-1)
	}
	stop(srv)
	srv = nil
}

// TestFormatText pins the readable line.
func TestFormatText(t *testing.T) {
	at := time.Date(2026, 12, 1, 10, 30, 0, 123e6, time.UTC)
	for _, c := range []struct {
		n    stream.RefreshNotification
		want string
	}{
		{stream.RefreshNotification{View: "daily", Mode: "incremental", RowsWritten: 1, SourceVersion: 12, Version: 7, LagMS: 3.14, CommittedAt: at},
			"10:30:00.123 daily incremental: 1 row written, source v12 -> view v7, lag 3.1 ms"},
		{stream.RefreshNotification{View: "daily", Mode: "rebuild", RowsWritten: 1000, SourceVersion: 12, Version: 8, LagMS: 40, CommittedAt: at},
			"10:30:00.123 daily rebuild: 1000 rows written, source v12 -> view v8, lag 40.0 ms"},
		{stream.RefreshNotification{View: "daily", Error: "source table 'events'\nwas dropped", SourceVersion: 12, Version: 8, CommittedAt: at},
			"10:30:00.123 daily FAILED: source table 'events' was dropped (view v8 still reflects source v12)"},
	} {
		n := c.n
		if got := subscribe.FormatText(&n); got != c.want {
			t.Errorf("got  %q\nwant %q", got, c.want)
		}
	}
}
