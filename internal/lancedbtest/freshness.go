package lancedbtest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"sync"
	"time"
)

// FreshnessOptions are the arguments of freshness.mjs's LanceDB baseline.
type FreshnessOptions struct {
	Dir     string        // a fresh database directory
	Rows    uint64        // rows of the source before the commits (10k default)
	Commits int           // single-row commits (≥ 200 in the benchmark)
	Gap     time.Duration // between commits (fixed rate; 0 = 50 ms)
	Poll    time.Duration // LanceDB refresh period; 0 = a tight loop
}

// Stats are percentiles in milliseconds.
type Stats struct {
	P50  float64 `json:"p50"`
	P99  float64 `json:"p99"`
	Mean float64 `json:"mean,omitempty"`
	Max  float64 `json:"max"`
}

// FreshnessBaseline is LanceDB's own freshness: single-row commits seen by
// a poller refreshing every Poll (or in a tight loop).
type FreshnessBaseline struct {
	Mode           string    `json:"mode"` // poll_1000ms, tight_loop
	PollMS         int       `json:"poll_ms"`
	Commits        int       `json:"commits"`
	Seen           int       `json:"seen"`       // commits some refresh reflected
	Latency        Stats     `json:"latency_ms"` // commit returned → refresh reflecting it done
	CommitMS       Stats     `json:"commit_ms"`
	Refreshes      int       `json:"refreshes"`
	NoOpRefreshes  int       `json:"no_op_refreshes"`
	PollerCPUMS    float64   `json:"poller_cpu_ms"`
	PollerWallMS   float64   `json:"poller_wall_ms"`
	PollerCPUCores float64   `json:"poller_cpu_cores"` // CPU burnt, in cores
	SamplesMS      []float64 `json:"samples_ms"`
}

// RunFreshnessBaseline runs `freshness.mjs lancedb` (harness is
// testdata/lancedb).
func RunFreshnessBaseline(ctx context.Context, harness string, o FreshnessOptions) (*FreshnessBaseline, error) {
	args := []string{"freshness.mjs", "lancedb", "--dir", o.Dir, "--poll-ms", strconv.FormatInt(o.Poll.Milliseconds(), 10)}
	if o.Rows > 0 {
		args = append(args, "--rows", strconv.FormatUint(o.Rows, 10))
	}
	if o.Commits > 0 {
		args = append(args, "--commits", strconv.Itoa(o.Commits))
	}
	if o.Gap > 0 {
		args = append(args, "--gap-ms", strconv.FormatInt(o.Gap.Milliseconds(), 10))
	}
	out, err := runNode(ctx, harness, args)
	if err != nil {
		return nil, err
	}
	var b FreshnessBaseline
	if err := json.Unmarshal(out, &b); err != nil {
		return nil, fmt.Errorf("freshness.mjs output: %w", err)
	}
	return &b, nil
}

// WriterOptions are the arguments of `freshness.mjs writer`.
type WriterOptions struct {
	Dir     string
	Table   string        // "" = events
	Create  uint64        // create the table with this many events first (0: it exists)
	Commits int           // single-row commits
	Gap     time.Duration // between commits, fixed rate; 0 with Burst = as fast as possible
	Burst   bool          // commit as fast as LanceDB can (Gap ignored)
}

// Commit is one single-row commit by the writer.
type Commit struct {
	Seq      int       `json:"seq"`
	ID       int64     `json:"id"`
	Version  uint64    `json:"version"`
	CommitMS float64   `json:"commit_ms"`
	Returned time.Time `json:"-"` // when the commit returned (wall clock)
	// ReturnedUS is Returned in microseconds since the epoch.
	ReturnedUS int64 `json:"returned_us"`
}

// WriterSummary ends the writer's output.
type WriterSummary struct {
	Commits  int   `json:"commits"`
	CommitMS Stats `json:"commit_ms"`
}

// FreshnessWriter is a running `freshness.mjs writer`: it has created its
// table (if asked) and waits for Start before committing.
//
// Concurrency: Start, Commits and Wait may be called from different
// goroutines; Commits is one channel, closed when the writer ends.
type FreshnessWriter struct {
	p       *lineProc
	commits chan Commit
	// Version is the table's version before the first commit.
	Version uint64
}

// StartFreshnessWriter starts the writer and returns once its table is
// ready (created if asked); it commits nothing until Start.
func StartFreshnessWriter(ctx context.Context, harness string, o WriterOptions) (*FreshnessWriter, error) {
	gap := o.Gap.Milliseconds()
	if o.Burst {
		gap = 0
	} else if gap == 0 {
		gap = 20
	}
	args := []string{"freshness.mjs", "writer", "--dir", o.Dir, "--wait", "--gap-ms", strconv.FormatInt(gap, 10)}
	if o.Table != "" {
		args = append(args, "--table", o.Table)
	}
	if o.Create > 0 {
		args = append(args, "--create", strconv.FormatUint(o.Create, 10))
	}
	if o.Commits > 0 {
		args = append(args, "--commits", strconv.Itoa(o.Commits))
	}
	w := &FreshnessWriter{commits: make(chan Commit, 4096)}
	var ready struct {
		Version uint64 `json:"version"`
	}
	p, err := startLineProc(ctx, harness, args, &ready, "done", func(line []byte) error {
		var c Commit
		if err := json.Unmarshal(line, &c); err != nil {
			return err
		}
		c.Returned = time.UnixMicro(c.ReturnedUS)
		w.commits <- c
		return nil
	}, func() { close(w.commits) })
	if err != nil {
		return nil, fmt.Errorf("freshness writer: %w", err)
	}
	w.p, w.Version = p, ready.Version
	return w, nil
}

// Start lets the writer begin committing.
func (w *FreshnessWriter) Start() error {
	_, err := io.WriteString(w.p.stdin, "go\n")
	return err
}

// Commits delivers each commit as it returns (buffered; read it promptly
// in long runs).
func (w *FreshnessWriter) Commits() <-chan Commit { return w.commits }

// Wait waits for the writer to end (drain Commits meanwhile) and returns
// its summary.
func (w *FreshnessWriter) Wait() (WriterSummary, error) {
	var s WriterSummary
	err := w.p.wait(&s)
	return s, err
}

// Kill ends the writer at once.
func (w *FreshnessWriter) Kill() { w.p.kill() }

// ViewSeen is a new version of a watched table, as a LanceDB reader saw it.
type ViewSeen struct {
	Version uint64    `json:"version"`
	Rows    uint64    `json:"rows"`
	SeenUS  int64     `json:"seen_us"` // microseconds since the epoch
	Seen    time.Time `json:"-"`
}

// WatchSummary ends a watcher's output: how often it looked and the CPU
// it burnt.
type WatchSummary struct {
	Polls  uint64  `json:"polls"`
	CPUMS  float64 `json:"cpu_ms"`
	WallMS float64 `json:"wall_ms"`
}

// ViewWatcher is a running `freshness.mjs watch`: a LanceDB reader that
// reports every new version of a table (a view mvd maintains) and its row
// count, so a benchmark can tell when a commit's row became readable in
// LanceDB.
//
// Concurrency: Seen and Stop may be called from different goroutines.
type ViewWatcher struct {
	p    *lineProc
	seen chan ViewSeen
	// Version and Rows are the table's state when the watcher started.
	Version, Rows uint64
}

// StartViewWatcher starts a LanceDB reader of DIR/TABLE checking for new
// versions every poll (0 = a tight loop) and returns once it is watching.
func StartViewWatcher(ctx context.Context, harness, dir, table string, poll time.Duration) (*ViewWatcher, error) {
	args := []string{"freshness.mjs", "watch", "--dir", dir, "--table", table, "--poll-ms", strconv.FormatInt(poll.Milliseconds(), 10)}
	w := &ViewWatcher{seen: make(chan ViewSeen, 4096)}
	var ready struct {
		Version uint64 `json:"version"`
		Rows    uint64 `json:"rows"`
	}
	p, err := startLineProc(ctx, harness, args, &ready, "polls", func(line []byte) error {
		var v ViewSeen
		if err := json.Unmarshal(line, &v); err != nil {
			return err
		}
		v.Seen = time.UnixMicro(v.SeenUS)
		w.seen <- v
		return nil
	}, func() { close(w.seen) })
	if err != nil {
		return nil, fmt.Errorf("view watcher: %w", err)
	}
	w.p, w.Version, w.Rows = p, ready.Version, ready.Rows
	return w, nil
}

// Seen delivers each new version as the reader sees it (buffered).
func (w *ViewWatcher) Seen() <-chan ViewSeen { return w.seen }

// Stop ends the watcher (drain Seen meanwhile) and returns its summary.
func (w *ViewWatcher) Stop() (WatchSummary, error) {
	w.p.stdin.Close()
	var s WatchSummary
	err := w.p.wait(&s)
	return s, err
}

// lineProc is a node script speaking JSON lines: a first {"ready":true,…}
// line, then event lines, then one summary line holding summaryKey.
type lineProc struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	done  chan struct{}

	mu      sync.Mutex
	summary []byte
	err     error
	stderr  bytes.Buffer
}

func startLineProc(ctx context.Context, harness string, args []string, ready any, summaryKey string, event func([]byte) error, closed func()) (*lineProc, error) {
	cmd := exec.CommandContext(ctx, "node", args...)
	cmd.Dir = harness
	p := &lineProc{cmd: cmd, done: make(chan struct{})}
	cmd.Stderr = &lockedWriter{mu: &p.mu, w: &p.stderr}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	p.stdin = stdin
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	r := bufio.NewReader(stdout)
	first, err := r.ReadBytes('\n')
	var probe struct {
		Ready bool `json:"ready"`
	}
	if err != nil || json.Unmarshal(first, &probe) != nil || !probe.Ready || json.Unmarshal(first, ready) != nil {
		cmd.Process.Kill()
		cmd.Wait()
		return nil, fmt.Errorf("did not get ready: %v %q\n%s", err, first, p.stderrText())
	}
	// The reader owns stdout until EOF, then reaps the process.
	go func() {
		defer close(p.done)
		defer closed()
		for {
			line, err := r.ReadBytes('\n')
			if err != nil {
				break
			}
			var keys map[string]json.RawMessage
			if json.Unmarshal(line, &keys) == nil && keys[summaryKey] != nil {
				p.mu.Lock()
				p.summary = line
				p.mu.Unlock()
				continue
			}
			if err := event(line); err != nil {
				p.setErr(fmt.Errorf("bad line %q: %w", line, err))
			}
		}
		if err := cmd.Wait(); err != nil {
			p.setErr(fmt.Errorf("%w\n%s", err, p.stderrText()))
		}
	}()
	return p, nil
}

func (p *lineProc) wait(summary any) error {
	<-p.done
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err != nil {
		return p.err
	}
	if p.summary == nil {
		return errors.New("ended without its summary")
	}
	return json.Unmarshal(p.summary, summary)
}

func (p *lineProc) kill() {
	p.cmd.Process.Kill()
	<-p.done
}

func (p *lineProc) setErr(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err == nil {
		p.err = err
	}
}

func (p *lineProc) stderrText() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stderr.String()
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
