package scaleout

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mvd-project/mvd/message"
	"github.com/mvd-project/mvd/serveinfo"
)

// SubjectPrefix is the subject prefix of the run: the one `mvd subscribe
// --nats-url` uses without --db or --subject-prefix, so the subscriber is
// started exactly as issue 23 writes it.
const SubjectPrefix = "mvd"

// Instance is one `mvd serve` process.
type Instance struct {
	ID       string
	StateDir string
	// AdminAddr is the admin HTTP address it listens on.
	AdminAddr string
	// Started is when it became ready.
	Started time.Time

	cmd  *exec.Cmd
	log  *lockedBuffer
	done chan struct{}
	err  error
}

// StartInstance starts `mvd serve --db DB --nats-url U1,U2,U3 --instance-id
// ID --state-dir DIR --admin-addr 127.0.0.1:0` and waits until its /readyz
// says 200.
func (c *Cluster) StartInstance(ctx context.Context, id string) (*Instance, error) {
	in := &Instance{ID: id, StateDir: filepath.Join(c.dir, "state-"+id), log: &lockedBuffer{}, done: make(chan struct{})}
	args := []string{"serve", "--db", c.DB, "--nats-url", strings.Join(c.NATS.URLs(), ","), "--instance-id", id,
		"--state-dir", in.StateDir, "--admin-addr", "127.0.0.1:0", "--subject-prefix", SubjectPrefix}
	args = append(args, c.cfg.ServeArgs...)
	in.cmd = exec.Command(c.Bin, args...)
	in.cmd.Stderr = in.log
	in.cmd.Stdout = in.log
	if err := in.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start instance %s: %w", id, err)
	}
	go func() {
		in.err = in.cmd.Wait()
		close(in.done)
	}()
	c.mu.Lock()
	c.instances = append(c.instances, in)
	c.mu.Unlock()
	c.tb.Cleanup(func() {
		in.Kill()
		if c.tb.Failed() || os.Getenv("MVD_SCALEOUT_LOGS") != "" {
			c.tb.Logf("log of instance %s:\n%s", id, in.Log())
		}
	})
	err := poll(ctx, time.Now().Add(60*time.Second), func() (bool, error) {
		if in.Dead() {
			return false, fmt.Errorf("exited: %v", in.err)
		}
		info, err := serveinfo.Read(in.StateDir)
		if err != nil || info.PID != in.cmd.Process.Pid {
			return false, err
		}
		in.AdminAddr = info.AdminAddr
		return ready(ctx, info.AdminAddr) == nil, nil
	})
	if err != nil {
		return nil, fmt.Errorf("instance %s not ready: %w\n%s", id, err, in.Log())
	}
	in.Started = time.Now()
	return in, nil
}

// Kill kills the process with SIGKILL (kill -9) and waits for it.
func (in *Instance) Kill() {
	if in.Dead() {
		return
	}
	_ = in.cmd.Process.Signal(syscall.SIGKILL)
	<-in.done
}

// Dead reports whether the process has exited.
func (in *Instance) Dead() bool {
	select {
	case <-in.done:
		return true
	default:
		return false
	}
}

// Log returns what the process wrote.
func (in *Instance) Log() string { return in.log.String() }

// Note is one notification the subscriber printed, with when it arrived.
type Note struct {
	message.Notification
	Received time.Time
}

// Subscriber is a `mvd subscribe --nats-url U1,U2,U3 --json` process.
type Subscriber struct {
	cmd     *exec.Cmd
	stderr  *lockedBuffer
	done    chan struct{}
	first   chan []string
	mu      sync.Mutex
	notes   []Note
	badLine string
}

// Subscribe starts the subscriber and waits for its {"subscribed":[…]}
// line.
func (c *Cluster) Subscribe(ctx context.Context) (*Subscriber, error) {
	s := &Subscriber{stderr: &lockedBuffer{}, done: make(chan struct{}), first: make(chan []string, 1)}
	s.cmd = exec.Command(c.Bin, "subscribe", "--nats-url", strings.Join(c.NATS.URLs(), ","), "--json")
	s.cmd.Stderr = s.stderr
	out, err := s.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start mvd subscribe: %w", err)
	}
	go s.read(out)
	c.tb.Cleanup(func() {
		_ = s.cmd.Process.Signal(syscall.SIGKILL)
		<-s.done
		if c.tb.Failed() {
			c.tb.Logf("mvd subscribe stderr:\n%s", s.stderr.String())
		}
	})
	select {
	case <-s.first:
		return s, nil
	case <-s.done:
		return nil, fmt.Errorf("mvd subscribe exited before subscribing: %s", s.stderr.String())
	case <-time.After(30 * time.Second):
		return nil, fmt.Errorf("mvd subscribe printed no subscribed line in 30s: %s", s.stderr.String())
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// read parses the subscriber's output: the subscribed line, then
// notifications.
func (s *Subscriber) read(out interface{ Read([]byte) (int, error) }) {
	defer close(s.done)
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 1<<16), 1<<22)
	first := true
	for sc.Scan() {
		line := sc.Bytes()
		if first {
			first = false
			var head struct {
				Subscribed *[]string `json:"subscribed"`
			}
			if err := json.Unmarshal(line, &head); err != nil || head.Subscribed == nil {
				s.setBad(string(line))
				continue
			}
			s.first <- *head.Subscribed
			continue
		}
		var n message.Notification
		if err := json.Unmarshal(line, &n); err != nil || n.View == "" {
			s.setBad(string(line))
			continue
		}
		s.mu.Lock()
		s.notes = append(s.notes, Note{Notification: n, Received: time.Now()})
		s.mu.Unlock()
	}
	_ = s.cmd.Wait()
}

func (s *Subscriber) setBad(line string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.badLine == "" {
		s.badLine = line
	}
}

// Notes returns the notifications received so far.
func (s *Subscriber) Notes() []Note {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Note(nil), s.notes...)
}

// Err says what is wrong with the subscriber: it exited, or printed a line
// that is not a notification.
func (s *Subscriber) Err() error {
	select {
	case <-s.done:
		return fmt.Errorf("mvd subscribe exited: %s", s.stderr.String())
	default:
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.badLine != "" {
		return fmt.Errorf("mvd subscribe printed a line that is not a notification: %s", s.badLine)
	}
	return nil
}

// Notified returns when the first successful notification of view at
// source version at least v arrived (ok false: none yet).
func (s *Subscriber) Notified(view string, v uint64) (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, n := range s.notes {
		if n.View == view && n.Error == "" && n.SourceVersion >= v {
			return n.Received, true
		}
	}
	return time.Time{}, false
}

// lockedBuffer is a bytes.Buffer safe for a process's writes and the
// test's reads.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
