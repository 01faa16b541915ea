// Package natstest starts real nats-server processes for tests: one
// JetStream server, or a JetStream cluster of several nodes routed to each
// other on 127.0.0.1, each a separate process so that Kill is a real
// kill -9 and Restart a real restart on the same store.
//
// The nats-server command is built from the module version in go.mod, once
// per version and machine (cached under the OS temp directory), so every
// package's tests share one build.
package natstest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// Token is the client auth token every server started here requires; the
// URLs returned carry it.
const Token = "s3cret-token"

// startTimeout bounds how long a node or the cluster may take to come up
// (listen, elect a JetStream meta leader).
const startTimeout = 60 * time.Second

// Cluster is a set of nats-server processes started by Start. Its methods
// are safe for use by one test goroutine plus cleanup; a Cluster belongs to
// the test that started it and is stopped with it.
type Cluster struct {
	t     testing.TB
	bin   string
	name  string
	nodes []*node
	mu    sync.Mutex
}

type node struct {
	name    string
	port    int // client port
	cport   int // cluster (route) port; 0 on a single server
	mport   int // monitoring port
	dir     string
	cmd     *exec.Cmd
	done    chan struct{} // closed when cmd has exited
	log     *bytes.Buffer
	logMu   *sync.Mutex
	running bool
}

// Single starts one JetStream server (no cluster) and returns its client
// URL with the token, as --nats-url takes it.
func Single(t testing.TB) string {
	t.Helper()
	return Start(t, 1).URLs()
}

// Start starts n nats-server processes with JetStream. With n == 1 it is a
// plain server; with n > 1 the nodes form one cluster (routes between all
// of them) and Start returns once every node is healthy and agrees on the
// JetStream meta leader. Every process is killed when the test ends.
func Start(t testing.TB, n int) *Cluster {
	t.Helper()
	if n < 1 {
		t.Fatalf("natstest: %d nodes", n)
	}
	bin, err := Binary()
	if err != nil {
		t.Fatal(err)
	}
	c := &Cluster{t: t, bin: bin, name: "mvdtest"}
	ports, err := freePorts(3 * n)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		nd := &node{
			name:  fmt.Sprintf("n%d", i),
			port:  ports[3*i],
			mport: ports[3*i+2],
			dir:   t.TempDir(),
			logMu: new(sync.Mutex),
		}
		if n > 1 {
			nd.cport = ports[3*i+1]
		}
		c.nodes = append(c.nodes, nd)
	}
	t.Cleanup(c.stopAll)
	for i := range c.nodes {
		if err := c.start(i); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.waitReady(startTimeout); err != nil {
		t.Fatal(err)
	}
	return c
}

// Size is the number of nodes, running or not.
func (c *Cluster) Size() int { return len(c.nodes) }

// URL is node i's client URL with the token.
func (c *Cluster) URL(i int) string {
	return fmt.Sprintf("nats://%s@127.0.0.1:%d", Token, c.nodes[i].port)
}

// URLs is every node's client URL with the token, comma-separated, as
// --nats-url takes a cluster.
func (c *Cluster) URLs() string {
	urls := make([]string, len(c.nodes))
	for i := range c.nodes {
		urls[i] = c.URL(i)
	}
	return strings.Join(urls, ",")
}

// Name is node i's server name ("n0", "n1", …), as JetStream names the
// leaders and peers of its streams, consumers and meta group.
func (c *Cluster) Name(i int) string { return c.nodes[i].name }

// Index is the index of the node with server name name, or -1.
func (c *Cluster) Index(name string) int {
	for i, nd := range c.nodes {
		if nd.name == name {
			return i
		}
	}
	return -1
}

// ClientPort is node i's client port (to tell which node a client is on).
func (c *Cluster) ClientPort(i int) int { return c.nodes[i].port }

// MonitorURL is node i's HTTP monitoring base URL (for /jsz, /connz, …).
func (c *Cluster) MonitorURL(i int) string {
	return fmt.Sprintf("http://127.0.0.1:%d", c.nodes[i].mport)
}

// Log is what node i has written to stderr so far (for failure messages).
func (c *Cluster) Log(i int) string {
	nd := c.nodes[i]
	nd.logMu.Lock()
	defer nd.logMu.Unlock()
	return nd.log.String()
}

// MetaLeader is the index of the node that is the JetStream meta leader, as
// the running nodes report it on /jsz; it waits (up to a minute) until one
// is elected and every running node agrees, and fails the test otherwise.
func (c *Cluster) MetaLeader(t testing.TB) int {
	t.Helper()
	deadline := time.Now().Add(startTimeout)
	var last error
	for time.Now().Before(deadline) {
		i, err := c.metaLeader()
		if err == nil {
			return i
		}
		last = err
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("natstest: no JetStream meta leader: %v", last)
	return -1
}

// Kill kills node i with SIGKILL (kill -9) and waits for it to exit.
func (c *Cluster) Kill(i int) {
	c.t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	nd := c.nodes[i]
	if !nd.running {
		return
	}
	_ = nd.cmd.Process.Kill()
	<-nd.done
	nd.running = false
}

// Restart starts node i again (after Kill) on the same ports and store and
// waits until it is healthy and the cluster agrees on a meta leader.
func (c *Cluster) Restart(i int) {
	c.t.Helper()
	c.Kill(i)
	if err := c.start(i); err != nil {
		c.t.Fatal(err)
	}
	if err := c.waitReady(startTimeout); err != nil {
		c.t.Fatal(err)
	}
}

// ConnectedNode is the index of the running node that has a client
// connection named name (nats.Name), from each node's /connz, or -1.
func (c *Cluster) ConnectedNode(name string) int {
	for i, nd := range c.nodes {
		if !c.isRunning(i) {
			continue
		}
		var connz struct {
			Conns []struct {
				Name string `json:"name"`
			} `json:"connections"`
		}
		if err := getJSON(fmt.Sprintf("http://127.0.0.1:%d/connz?limit=100000", nd.mport), &connz); err != nil {
			continue
		}
		for _, cn := range connz.Conns {
			if cn.Name == name {
				return i
			}
		}
	}
	return -1
}

func (c *Cluster) isRunning(i int) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.nodes[i].running
}

func (c *Cluster) args(i int) []string {
	nd := c.nodes[i]
	args := []string{
		"-a", "127.0.0.1", "-p", fmt.Sprint(nd.port),
		"-m", fmt.Sprint(nd.mport),
		"-n", nd.name,
		"-js", "-sd", nd.dir,
		"--auth", Token,
	}
	if nd.cport != 0 {
		routes := make([]string, 0, len(c.nodes))
		for _, o := range c.nodes {
			routes = append(routes, fmt.Sprintf("nats://127.0.0.1:%d", o.cport))
		}
		args = append(args,
			"--cluster_name", c.name,
			"--cluster", fmt.Sprintf("nats://127.0.0.1:%d", nd.cport),
			"--routes", strings.Join(routes, ","))
	}
	return args
}

func (c *Cluster) start(i int) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	nd := c.nodes[i]
	nd.logMu.Lock()
	nd.log = new(bytes.Buffer)
	nd.logMu.Unlock()
	cmd := exec.Command(c.bin, c.args(i)...)
	cmd.Stderr = &lockedWriter{mu: nd.logMu, w: &nd.log}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("natstest: start %s: %w", nd.name, err)
	}
	nd.cmd = cmd
	nd.done = make(chan struct{})
	nd.running = true
	go func(done chan struct{}) {
		_ = cmd.Wait()
		close(done)
	}(nd.done)
	return nil
}

func (c *Cluster) stopAll() {
	for i := range c.nodes {
		c.Kill(i)
	}
}

// waitReady waits until every running node answers /healthz with 200 and,
// on a cluster, all of them name the same meta leader.
func (c *Cluster) waitReady(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for i := range c.nodes {
		for {
			if !c.isRunning(i) {
				break
			}
			if err := healthy(c.nodes[i].mport); err == nil {
				break
			} else if time.Now().After(deadline) {
				return fmt.Errorf("natstest: %s not healthy: %v\n%s", c.nodes[i].name, err, c.Log(i))
			}
			select {
			case <-c.nodes[i].done:
				return fmt.Errorf("natstest: %s exited:\n%s", c.nodes[i].name, c.Log(i))
			case <-time.After(10 * time.Millisecond):
			}
		}
	}
	if len(c.nodes) == 1 {
		return nil
	}
	for {
		_, err := c.metaLeader()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return err
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// errNoLeader is metaLeader's error while no agreed leader is known.
var errNoLeader = errors.New("natstest: no agreed JetStream meta leader")

func (c *Cluster) metaLeader() (int, error) {
	leader := ""
	for i, nd := range c.nodes {
		if !c.isRunning(i) {
			continue
		}
		var jsz struct {
			Meta *struct {
				Leader string `json:"leader"`
			} `json:"meta_cluster"`
		}
		if err := getJSON(fmt.Sprintf("http://127.0.0.1:%d/jsz", nd.mport), &jsz); err != nil {
			return -1, fmt.Errorf("%w: %s: %v", errNoLeader, nd.name, err)
		}
		if jsz.Meta == nil || jsz.Meta.Leader == "" {
			return -1, fmt.Errorf("%w: %s knows none", errNoLeader, nd.name)
		}
		if leader != "" && jsz.Meta.Leader != leader {
			return -1, fmt.Errorf("%w: %s says %s, another says %s", errNoLeader, nd.name, jsz.Meta.Leader, leader)
		}
		leader = jsz.Meta.Leader
	}
	for i, nd := range c.nodes {
		if nd.name == leader && c.isRunning(i) {
			return i, nil
		}
	}
	return -1, fmt.Errorf("%w: leader %q is not a running node", errNoLeader, leader)
}

var httpClient = &http.Client{Timeout: 2 * time.Second}

func healthy(mport int) error {
	resp, err := httpClient.Get(fmt.Sprintf("http://127.0.0.1:%d/healthz", mport))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		var b bytes.Buffer
		_, _ = b.ReadFrom(resp.Body)
		return fmt.Errorf("healthz %d: %s", resp.StatusCode, strings.TrimSpace(b.String()))
	}
	return nil
}

func getJSON(url string, v any) error {
	resp, err := httpClient.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(v)
}

func freePorts(n int) ([]int, error) {
	ls := make([]net.Listener, 0, n)
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	ports := make([]int, 0, n)
	for i := 0; i < n; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("natstest: free port: %w", err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

type lockedWriter struct {
	mu *sync.Mutex
	w  **bytes.Buffer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return (*l.w).Write(p)
}

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// Binary builds the nats-server command from the module version in go.mod
// (once per version: the result is cached under the OS temp directory and
// shared by every test binary) and returns its path.
func Binary() (string, error) {
	binOnce.Do(func() { binPath, binErr = build() })
	return binPath, binErr
}

const serverModule = "github.com/nats-io/nats-server/v2"

func build() (string, error) {
	goCmd := filepath.Join(runtime.GOROOT(), "bin", "go")
	// The version go.mod selects names the cached binary; a replaced
	// module has no stable version to cache by and is built per process.
	v, err := exec.Command(goCmd, "list", "-m", "-f", "{{.Version}}{{if .Replace}} replaced{{end}}", serverModule).Output()
	if err != nil {
		return "", fmt.Errorf("natstest: go list %s: %w", serverModule, err)
	}
	version := strings.TrimSpace(string(v))
	if strings.Contains(version, " ") {
		version = ""
	}
	dir := filepath.Join(os.TempDir(), "mvd-natstest")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("natstest: %w", err)
	}
	exe := ""
	if runtime.GOOS == "windows" {
		exe = ".exe"
	}
	if version != "" {
		cached := filepath.Join(dir, "nats-server-"+version+exe)
		if st, err := os.Stat(cached); err == nil && st.Mode().IsRegular() {
			return cached, nil
		}
		return cached, goBuild(dir, cached)
	}
	tmp, err := os.MkdirTemp(dir, "build-")
	if err != nil {
		return "", fmt.Errorf("natstest: %w", err)
	}
	out := filepath.Join(tmp, "nats-server"+exe)
	return out, goBuild(dir, out)
}

// goBuild builds into a temporary name and renames it into place, so test
// binaries building at once never run a half-written file.
func goBuild(dir, out string) error {
	tmp, err := os.CreateTemp(dir, "partial-")
	if err != nil {
		return fmt.Errorf("natstest: %w", err)
	}
	tmp.Close()
	defer os.Remove(tmp.Name())
	b, err := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "build", "-o", tmp.Name(), serverModule).CombinedOutput()
	if err != nil {
		return fmt.Errorf("natstest: go build nats-server: %v\n%s", err, b)
	}
	if err := os.Rename(tmp.Name(), out); err != nil {
		return fmt.Errorf("natstest: %w", err)
	}
	return nil
}
