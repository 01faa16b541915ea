package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"github.com/mvd-project/mvd/serveinfo"
)

// BindCommandFlags defines BindFlags' configuration flags plus the flags
// of the serve command itself (--check-config).
func BindCommandFlags(fs *pflag.FlagSet) {
	bindFlags(fs)
	fs.Bool("check-config", false, "validate the configuration, print it as JSON and exit without serving")
}

// DepsFunc builds the serve process's dependencies from its configuration
// (the CLI wires matview and stream here).
type DepsFunc func(cfg Config, log *slog.Logger) (Deps, error)

// Command is `mvd serve`: it loads the configuration from the parsed
// flags, the environment and the config file; with --check-config it
// prints the effective configuration and returns; otherwise it serves
// until SIGINT or SIGTERM (the first drains, a second stops at once).
func Command(fs *pflag.FlagSet, environ []string, stdout, stderr io.Writer, deps DepsFunc) (err error) {
	cfg, err := LoadConfig(fs, environ)
	if err != nil {
		return fmt.Errorf("invalid configuration:\n%w", err)
	}
	if check, _ := fs.GetBool("check-config"); check {
		out := cfg
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	log := newLogger(cfg, stderr)
	// The locks come first: a second serve must be refused with its
	// message, before it opens (and trips over) anything the first holds.
	// The database's lock sees a daemon given another state directory.
	releaseDB, err := lockDatabase(cfg, log)
	if err != nil {
		return err
	}
	defer releaseDB()
	lock, err := serveinfo.AcquireLock(cfg.StateDir)
	if err != nil {
		return err
	}
	d := Deps{Logger: log}
	if deps != nil {
		if d, err = deps(cfg, log); err != nil {
			_ = lock.Release()
			return err
		}
		if d.Logger == nil {
			d.Logger = log
		}
	}
	d.Lock = lock
	if path := envValue(environ, jobHoldEnv); path != "" && d.JobHold == nil {
		d.JobHold = holdWhileExists(path, fileExists)
	}
	drain, hard, stop := signalContexts(context.Background(), log)
	defer stop()
	if limit, _ := parseSize(cfg.MemoryLimit); limit > 0 {
		debug.SetMemoryLimit(limit)
	}
	mctx, stopMemory := context.WithCancel(context.Background())
	memoryDone := make(chan struct{})
	go func() {
		defer close(memoryDone)
		defaultMemoryReturner(log).run(mctx)
	}()
	defer func() {
		stopMemory()
		<-memoryDone
	}()
	done := make(chan error, 1)
	go func() { done <- NewServer(cfg, d).Run(drain, hard) }()
	select {
	case err = <-done:
	case <-hard.Done():
		// Second signal: refreshes in flight were told to stop. Give them
		// a moment to return (their commits are atomic either way).
		select {
		case err = <-done:
		case <-time.After(hardStopGrace):
			// Work is still in flight: leave what DepsFunc opened as it
			// is (closing it under a refresh would not be safer).
			return errors.New("stopped at once by a second signal, with work in flight (views are at their previous or new version, whole)")
		}
	}
	if d.Close != nil {
		if cerr := d.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}
	if err == nil {
		// The last line of a clean stop (a failure is the CLI's error line).
		log.Info("stopped")
	}
	return err
}

// lockDatabase takes the database's lock (serveinfo.AcquireDBLock); an
// object store has none to take (warnRemoteLock says what stands in).
func lockDatabase(cfg Config, log *slog.Logger) (release func(), err error) {
	if cfg.Remote() {
		warnRemoteLock(cfg, log)
		return func() {}, nil
	}
	dbLock, err := serveinfo.AcquireDBLock(cfg.DB, cfg.StateDir, cfg.NATSURL == "")
	if err != nil {
		return nil, err
	}
	return func() { _ = dbLock.Release() }, nil
}

// hardStopGrace is how long a second signal waits for refreshes in
// flight to notice their context before the process exits anyway.
const hardStopGrace = 2 * time.Second

// newLogger returns the slog logger the configuration asks for, writing
// to w.
func newLogger(cfg Config, w io.Writer) *slog.Logger {
	var level slog.Level
	_ = level.UnmarshalText([]byte(cfg.LogLevel))
	opts := &slog.HandlerOptions{Level: level}
	if cfg.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// signalContexts returns two contexts: drain is cancelled by the first
// SIGINT or SIGTERM, hard by the second. stop releases the signal
// handler and cancels both.
func signalContexts(parent context.Context, log *slog.Logger) (drain, hard context.Context, stop func()) {
	drain, cancelDrain := context.WithCancel(parent)
	hard, cancelHard := context.WithCancel(parent)
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM)
	done := make(chan struct{})
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		select {
		case sig := <-ch:
			log.Info("signal received: draining", "signal", sig.String())
			cancelDrain()
		case <-done:
			return
		}
		select {
		case sig := <-ch:
			log.Warn("second signal: stopping at once", "signal", sig.String())
			cancelHard()
		case <-done:
		}
	}()
	return drain, hard, func() {
		signal.Stop(ch)
		close(done)
		<-exited
		cancelDrain()
		cancelHard()
	}
}

// jobHoldEnv names a file whose existence holds every refresh job that
// starts, before its refresh, until it is removed or the job cancelled:
// a test's way to have a job in flight for as long as it needs (to kill
// the daemon under it). Not a setting: nothing else should use it.
const jobHoldEnv = "MVD_TEST_JOB_HOLD"

// fileExists reports whether path exists.
func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
