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
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	commits chan Commit
	done    chan struct{}
	// Version is the table's version before the first commit.
	Version uint64

	mu      sync.Mutex
	summary WriterSummary
	err     error
	stderr  bytes.Buffer
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
	cmd := exec.CommandContext(ctx, "node", args...)
	cmd.Dir = harness
	w := &FreshnessWriter{cmd: cmd, commits: make(chan Commit, 4096), done: make(chan struct{})}
	cmd.Stderr = &lockedWriter{mu: &w.mu, w: &w.stderr}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	w.stdin = stdin
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	r := bufio.NewReader(stdout)
	first, err := r.ReadBytes('\n')
	var ready struct {
		Ready   bool   `json:"ready"`
		Version uint64 `json:"version"`
	}
	if err != nil || json.Unmarshal(first, &ready) != nil || !ready.Ready {
		cmd.Process.Kill()
		cmd.Wait()
		return nil, fmt.Errorf("freshness writer did not get ready: %v %q\n%s", err, first, w.stderrText())
	}
	w.Version = ready.Version
	// The reader owns stdout until EOF, then reaps the process.
	go func() {
		defer close(w.done)
		defer close(w.commits)
		for {
			line, err := r.ReadBytes('\n')
			if err != nil {
				break
			}
			var probe struct {
				Done bool `json:"done"`
			}
			if json.Unmarshal(line, &probe) == nil && probe.Done {
				var s WriterSummary
				json.Unmarshal(line, &s)
				w.mu.Lock()
				w.summary = s
				w.mu.Unlock()
				continue
			}
			var c Commit
			if err := json.Unmarshal(line, &c); err != nil {
				w.setErr(fmt.Errorf("freshness writer: bad line %q", line))
				continue
			}
			c.Returned = time.UnixMicro(c.ReturnedUS)
			w.commits <- c
		}
		if err := cmd.Wait(); err != nil {
			w.setErr(fmt.Errorf("freshness writer: %w\n%s", err, w.stderrText()))
		}
	}()
	return w, nil
}

// Start lets the writer begin committing.
func (w *FreshnessWriter) Start() error {
	_, err := io.WriteString(w.stdin, "go\n")
	return err
}

// Commits delivers each commit as it returns (buffered; read it promptly
// in long runs).
func (w *FreshnessWriter) Commits() <-chan Commit { return w.commits }

// Wait waits for the writer to end (drain Commits meanwhile) and returns
// its summary.
func (w *FreshnessWriter) Wait() (WriterSummary, error) {
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err == nil && w.summary.Commits == 0 {
		return w.summary, errors.New("freshness writer ended without its summary")
	}
	return w.summary, w.err
}

// Kill ends the writer at once.
func (w *FreshnessWriter) Kill() {
	w.cmd.Process.Kill()
	<-w.done
}

func (w *FreshnessWriter) setErr(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err == nil {
		w.err = err
	}
}

func (w *FreshnessWriter) stderrText() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.stderr.String()
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
