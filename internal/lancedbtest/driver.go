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
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// Driver is one long-lived LanceDB 0.39 process (testdata/lancedb/driver.mjs)
// working on one database directory. Each command opens its table afresh, so
// it sees every commit made meanwhile, by mvd or by LanceDB.
//
// Concurrency: a Driver is safe for use by several goroutines; commands run
// one at a time, in the order their calls take the lock. A Driver whose
// process died (or whose call was cancelled, which kills it) fails every
// later call with ErrDriverDead.
type Driver struct {
	dir string
	// Timeout bounds each call made without an explicit context; zero
	// means no bound beyond the test's own context.
	Timeout time.Duration

	ctx    context.Context
	cancel context.CancelFunc
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan []byte
	stderr *tailBuffer
	done   chan struct{} // closed when the process has exited

	mu   sync.Mutex
	next int64
	last time.Duration
	dead error
}

// PID is the driver's node process id.
func (d *Driver) PID() int { return d.cmd.Process.Pid }

// ErrDriverDead is returned by calls on a Driver whose process has exited.
var ErrDriverDead = errors.New("lancedbtest: driver process is not running")

// Error is a command LanceDB (or the driver script) refused. Message is
// LanceDB's own text, for tests that compare error messages.
type Error struct {
	Cmd     string
	Message string
}

func (e *Error) Error() string { return "lancedb " + e.Cmd + ": " + e.Message }

var rustLocation = regexp.MustCompile(`, /\S+\.rs:\d+:\d+`)

// Head is Message without the Rust source locations and "Caused by" chain
// LanceDB appends to some errors: the part a user reads.
func (e *Error) Head() string {
	m := e.Message
	if i := strings.Index(m, "  Caused by:"); i >= 0 {
		m = m[:i]
	}
	return strings.TrimSpace(rustLocation.ReplaceAllString(m, ""))
}

// Message returns LanceDB's message if err is (or wraps) an *Error, else "".
func Message(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Message
	}
	return ""
}

// StartDriver starts a driver on the database directory dir (created by
// the caller; tb.TempDir() is typical). The process is killed when the test
// ends. The test is skipped when LanceDB is not installed (failed under CI).
func StartDriver(tb testing.TB, dir string) *Driver {
	tb.Helper()
	Require(tb)
	d, err := startDriver(tb.Context(), HarnessDir(tb), dir)
	if err != nil {
		tb.Fatalf("lancedbtest: %v", err)
	}
	tb.Cleanup(func() { d.Close() })
	return d
}

// StartDriverProcess starts a driver outside of a test (benchmarks driven
// from main, tools); harness is testdata/lancedb. The caller must Close it.
func StartDriverProcess(ctx context.Context, harness, dir string) (*Driver, error) {
	return startDriver(ctx, harness, dir)
}

func startDriver(parent context.Context, harness, dir string) (*Driver, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	procCtx, cancel := context.WithCancel(context.WithoutCancel(parent))
	cmd := exec.CommandContext(procCtx, "node", "driver.mjs", abs)
	cmd.Dir = harness
	stdin, err := cmd.StdinPipe()
	if err != nil {
		cancel()
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		cancel()
		return nil, err
	}
	d := &Driver{
		dir: abs, Timeout: 10 * time.Minute, ctx: parent, cancel: cancel, cmd: cmd, stdin: stdin,
		lines: make(chan []byte, 1), stderr: &tailBuffer{max: 64 << 10}, done: make(chan struct{}),
	}
	cmd.Stderr = d.stderr
	if err := cmd.Start(); err != nil {
		cancel()
		return nil, fmt.Errorf("start driver: %w", err)
	}
	// The reader owns stdout until EOF; then it reaps the process.
	go func() {
		r := bufio.NewReaderSize(stdout, 1<<20)
		for {
			line, err := r.ReadBytes('\n')
			if err != nil {
				break
			}
			if !bytes.HasPrefix(line, []byte(`{"id":`)) {
				// Not an answer (a library writing to stdout): keep it
				// with the process's other output.
				d.stderr.Write(line)
				continue
			}
			// After a kill nobody waits for answers: drain to EOF.
			select {
			case d.lines <- line:
			case <-procCtx.Done():
			}
		}
		cmd.Wait()
		close(d.done)
		close(d.lines)
	}()
	if _, err := d.call(parent, "ping", nil, nil); err != nil {
		d.Close()
		return nil, err
	}
	return d, nil
}

// Dir returns the database directory (absolute).
func (d *Driver) Dir() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.dir
}

// Connect points the driver at another database directory (e.g. a fresh
// one per differential run, sparing a node start each time).
func (d *Driver) Connect(dir string) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	if err := d.Call("connect", map[string]any{"dir": abs}, nil); err != nil {
		return err
	}
	d.mu.Lock()
	d.dir = abs
	d.mu.Unlock()
	return nil
}

// ConnectURI points the driver at the database uri (s3://BUCKET/PREFIX)
// on object storage, with LanceDB's storage options (aws_endpoint,
// allow_http, aws_access_key_id, …; s3fstest.Server.StorageOptions).
// Dir then returns uri.
func (d *Driver) ConnectURI(uri string, storageOptions map[string]string) error {
	if err := d.Call("connect", map[string]any{"dir": uri, "storage_options": storageOptions}, nil); err != nil {
		return err
	}
	d.mu.Lock()
	d.dir = uri
	d.mu.Unlock()
	return nil
}

// TablePath returns DIR/NAME.lance.
func (d *Driver) TablePath(name string) string {
	if dir := d.Dir(); strings.Contains(dir, "://") {
		return dir + "/" + name + ".lance"
	}
	return filepath.Join(d.Dir(), name+".lance")
}

// Last returns how long the previous command took inside the LanceDB
// process (excluding the pipe round trip).
func (d *Driver) Last() time.Duration {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.last
}

// Close ends the process (stdin closed, then killed if it lingers) and
// waits for it. It is safe to call more than once.
func (d *Driver) Close() error {
	d.stdin.Close()
	select {
	case <-d.done:
	case <-time.After(5 * time.Second):
		d.cancel()
		<-d.done
	}
	d.cancel()
	return nil
}

// Call runs one command with the given arguments (a struct or map encoding
// to a JSON object, or nil) and decodes its result into result (nil to
// discard). See driver.mjs for the commands.
func (d *Driver) Call(cmd string, args, result any) error {
	ctx := d.ctx
	if d.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d.Timeout)
		defer cancel()
	}
	_, err := d.call(ctx, cmd, args, result)
	return err
}

// CallContext is Call under ctx; it also returns the command's duration
// measured inside the LanceDB process. Cancelling ctx while the command
// runs kills the process (a LanceDB call cannot be interrupted otherwise);
// a ctx already done sends nothing.
func (d *Driver) CallContext(ctx context.Context, cmd string, args, result any) (time.Duration, error) {
	return d.call(ctx, cmd, args, result)
}

type answer struct {
	ID     *int64          `json:"id"`
	OK     bool            `json:"ok"`
	MS     float64         `json:"ms"`
	Result json.RawMessage `json:"result"`
	Error  string          `json:"error"`
}

func (d *Driver) call(ctx context.Context, cmd string, args, result any) (time.Duration, error) {
	id := d.nextID()
	req, err := request(id, cmd, args)
	if err != nil {
		return 0, fmt.Errorf("lancedb %s: %w", cmd, err)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.dead != nil {
		return 0, d.dead
	}
	if err := ctx.Err(); err != nil {
		// Nothing sent: the driver stays usable.
		return 0, fmt.Errorf("lancedb %s: %w", cmd, err)
	}
	if _, err := d.stdin.Write(req); err != nil {
		return 0, d.died(cmd, err)
	}
	var line []byte
	select {
	case l, ok := <-d.lines:
		if !ok {
			return 0, d.died(cmd, io.EOF)
		}
		line = l
	case <-ctx.Done():
		d.cancel()
		return 0, d.died(cmd, ctx.Err())
	}
	var a answer
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	if err := dec.Decode(&a); err != nil {
		return 0, fmt.Errorf("lancedb %s: bad answer %q: %w", cmd, truncate(line), err)
	}
	if a.ID == nil || *a.ID != id {
		// Answers come in request order; anything else is a broken pipe
		// protocol, and later answers cannot be trusted either.
		d.cancel()
		return 0, d.died(cmd, fmt.Errorf("answer %q to request %d", truncate(line), id))
	}
	dur := time.Duration(a.MS * float64(time.Millisecond))
	d.last = dur
	if !a.OK {
		return dur, &Error{Cmd: cmd, Message: a.Error}
	}
	if result != nil {
		dec := json.NewDecoder(bytes.NewReader(a.Result))
		dec.UseNumber()
		if err := dec.Decode(result); err != nil {
			return dur, fmt.Errorf("lancedb %s: decode result %q: %w", cmd, truncate(a.Result), err)
		}
	}
	return dur, nil
}

func (d *Driver) nextID() int64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.next++
	return d.next
}

// died marks the driver dead, with the process's last words.
func (d *Driver) died(cmd string, cause error) error {
	d.dead = fmt.Errorf("%w (after %s: %v)\n%s", ErrDriverDead, cmd, cause, d.stderr.String())
	return d.dead
}

// request encodes {"id":id,"cmd":cmd, ...args}.
func request(id int64, cmd string, args any) ([]byte, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, `{"id":%d,"cmd":%q`, id, cmd)
	if args != nil {
		enc, err := json.Marshal(args)
		if err != nil {
			return nil, err
		}
		enc = bytes.TrimSpace(enc)
		if len(enc) < 2 || enc[0] != '{' {
			return nil, fmt.Errorf("arguments must encode to a JSON object, got %s", truncate(enc))
		}
		if inner := bytes.TrimSpace(enc[1 : len(enc)-1]); len(inner) > 0 {
			b.WriteByte(',')
			b.Write(inner)
		}
	}
	b.WriteString("}\n")
	return b.Bytes(), nil
}

func truncate(b []byte) string {
	if len(b) > 300 {
		return string(b[:300]) + "…"
	}
	return string(b)
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.max {
		t.buf = append([]byte(nil), t.buf[len(t.buf)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}
