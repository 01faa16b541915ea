package wire

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/mvd-project/mvd/cluster"
	"github.com/mvd-project/mvd/daemon"
	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/serveinfo"
)

// serveProcEnv holds the flags of `mvd serve` for TestHelperServeProcess.
const serveProcEnv = "MVD_TEST_WIRE_SERVE"

// TestHelperServeProcess is `mvd serve` (daemon.Command over this
// package's Deps) in a process of its own, for the tests that kill one
// with SIGKILL; it does nothing unless serveProcEnv is set.
func TestHelperServeProcess(t *testing.T) {
	args := os.Getenv(serveProcEnv)
	if args == "" {
		t.Skip("helper process of the kill -9 tests")
	}
	fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	daemon.BindCommandFlags(fs)
	if err := fs.Parse(strings.Fields(args)); err != nil {
		fmt.Fprintln(os.Stderr, "mvd:", err)
		os.Exit(2)
	}
	if err := daemon.Command(fs, os.Environ(), os.Stdout, os.Stderr, Deps); err != nil {
		fmt.Fprintln(os.Stderr, "mvd:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// serveProc is one mvd serve process.
type serveProc struct {
	cmd      *exec.Cmd
	stateDir string
	mu       sync.Mutex
	stderr   bytes.Buffer
	done     chan struct{}
}

func (p *serveProc) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stderr.Write(b)
}

func (p *serveProc) log() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stderr.String()
}

// startServeProc starts mvd serve with args (and --state-dir stateDir);
// it is killed with the test.
func startServeProc(t *testing.T, stateDir string, args ...string) *serveProc {
	t.Helper()
	args = append(args, "--state-dir", stateDir)
	p := &serveProc{cmd: exec.Command(os.Args[0], "-test.run=^TestHelperServeProcess$", "-test.count=1"), stateDir: stateDir, done: make(chan struct{})}
	p.cmd.Env = append(os.Environ(), serveProcEnv+"="+strings.Join(args, " "))
	p.cmd.Stderr = p
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		_ = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		<-p.done
	})
	return p
}

// adminAddr waits for the process's serve.json and returns its admin
// address.
func (p *serveProc) adminAddr(t *testing.T) string {
	t.Helper()
	var addr string
	waitUntil(t, "serve.json of "+p.stateDir, func() (bool, error) {
		select {
		case <-p.done:
			return false, fmt.Errorf("serve exited: %s", p.log())
		default:
		}
		info, err := serveinfo.Read(p.stateDir)
		addr = info.AdminAddr
		return err == nil && addr != "", nil
	})
	return addr
}

// statusAt is GET /v1/cluster at addr.
func statusAt(addr string) (cluster.Status, error) {
	var st cluster.Status
	resp, err := http.Get("http://" + addr + "/v1/cluster")
	if err != nil {
		return st, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return st, fmt.Errorf("GET /v1/cluster: %s", resp.Status)
	}
	return st, json.NewDecoder(resp.Body).Decode(&st)
}

// TestInstanceKillFailover (issue 23): three mvd serve processes on one
// database and one external NATS, the default lease TTL (3s). One is
// killed with SIGKILL: every view it owned is refreshed by the others
// past the next source commit within 5 s. A fourth process given a live
// instance's id exits 1, naming it.
func TestInstanceKillFailover(t *testing.T) {
	const nviews = 6
	dir, sources := clusterDB(t, 2, nviews)
	url := natsServer(t)
	procs := map[string]*serveProc{}
	addrs := map[string]string{}
	for _, id := range []string{"p1", "p2", "p3"} {
		procs[id] = startServeProc(t, filepath.Join(t.TempDir(), id), "--db", dir, "--nats-url", url, "--instance-id", id, "--admin-addr", "127.0.0.1:0")
	}
	for id, p := range procs {
		addrs[id] = p.adminAddr(t)
	}
	owner := map[string]string{}
	waitUntil(t, "views placed over three processes", func() (bool, error) {
		st, err := statusAt(addrs["p1"])
		if err != nil || len(st.Members) != 3 {
			return false, nil
		}
		ids := []string{"p1", "p2", "p3"}
		for _, l := range st.Leases {
			if l.Kind == cluster.KindView {
				owner[l.Name] = l.Holder
			}
		}
		for i := range nviews {
			v := fmt.Sprintf("v%d", i)
			if owner[v] != cluster.Preferred(ids, cluster.KindView, v) {
				return false, nil
			}
		}
		return true, nil
	})

	dup := startServeProc(t, filepath.Join(t.TempDir(), "dup"), "--db", dir, "--nats-url", url, "--instance-id", "p2", "--admin-addr", "127.0.0.1:0")
	select {
	case <-dup.done:
	case <-time.After(30 * time.Second):
		t.Fatal("a second p2 did not exit")
	}
	if code := dup.cmd.ProcessState.ExitCode(); code != 1 || !strings.Contains(dup.log(), addrs["p2"]) || !strings.Contains(dup.log(), fmt.Sprint(procs["p2"].cmd.Process.Pid)) {
		t.Fatalf("a second p2 exited %d with:\n%s\nwant 1 and the live p2 named (pid %d, admin %s)", code, dup.log(), procs["p2"].cmd.Process.Pid, addrs["p2"])
	}

	victim, owned := "", 0
	for id := range procs {
		n := 0
		for _, h := range owner {
			if h == id {
				n++
			}
		}
		if n > owned {
			victim, owned = id, n
		}
	}
	want := make([]uint64, len(sources))
	for i, src := range sources {
		want[i] = writeRows(t, filepath.Join(dir, src+lance.TableSuffix), 100, 110)
	}
	waitViews(t, dir, nviews, sources, want, 30*time.Second)
	if err := procs[victim].cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	for i, src := range sources {
		want[i] = writeRows(t, filepath.Join(dir, src+lance.TableSuffix), 200, 210)
	}
	took := waitViews(t, dir, nviews, sources, want, 30*time.Second)
	t.Logf("%s (owner of %d of %d views) killed: every view refreshed past the next commit %v later", victim, owned, nviews, time.Since(killed))
	if took > 5*time.Second {
		t.Errorf("views refreshed %v after their owner was killed; want within 5s", took)
	}
}
