package main

import (
	"bytes"
	"context"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/mvd-project/mvd/internal/lancedbtest"
	"github.com/mvd-project/mvd/matview"
	"github.com/mvd-project/mvd/plan"
	"github.com/mvd-project/mvd/serveinfo"
)

// TestServeCrash kills `mvd serve` with SIGKILL at random moments while
// LanceDB keeps committing to the source (20 kills), restarting it each
// time; in the end the view equals LanceDB's evaluation of its definition
// at the newest source version: no source row missing, none twice.
func TestServeCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs for a while")
	}
	lancedbtest.Require(t)
	bin := mvdBinary(t)
	dir := t.TempDir()
	ctx := context.Background()
	w, err := lancedbtest.StartFreshnessWriter(ctx, lancedbtest.HarnessDir(t), lancedbtest.WriterOptions{Dir: dir, Create: 1000, Commits: 400, Gap: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	db, err := matview.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	sel, _ := plan.ParseSelect("id")
	if _, err := db.CreateView(ctx, "v", "events", matview.Definition{Select: sel}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	state := filepath.Join(dir, ".mvd")
	start := func() (*exec.Cmd, *bytes.Buffer) {
		var stderr bytes.Buffer
		cmd := exec.Command(bin, "serve", "--db", dir, "--admin-addr", "127.0.0.1:0")
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(30 * time.Second)
		for {
			if info, err := serveinfo.Read(state); err == nil && info.PID == cmd.Process.Pid {
				return cmd, &stderr
			}
			if time.Now().After(deadline) {
				_ = cmd.Process.Kill()
				_ = cmd.Wait()
				t.Fatalf("serve did not start:\n%s", stderr.String())
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	var last uint64
	commitsDone := make(chan struct{})
	go func() {
		defer close(commitsDone)
		for c := range w.Commits() {
			last = c.Version
		}
	}()
	rng := rand.New(rand.NewPCG(11, 0))
	for kill := 0; kill < 20; kill++ {
		cmd, _ := start()
		// The fault schedule: let it run a random while, then kill it.
		time.Sleep(time.Duration(20+rng.IntN(180)) * time.Millisecond)
		if err := cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		_ = cmd.Wait()
	}
	<-commitsDone
	if _, err := w.Wait(); err != nil {
		t.Fatal(err)
	}
	cmd, stderr := start()
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()
	d := lancedbtest.StartDriver(t, dir)
	deadline := time.Now().Add(60 * time.Second)
	for {
		s, err := d.Schema("v", 0)
		if err == nil {
			if wm, _ := strconv.ParseUint(s.Metadata["mv.source_version"], 10, 64); wm == last {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("view did not reach source version %d:\n%s", last, stderr.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := d.CheckViewAtWatermark("v"); err != nil {
		t.Fatal(err)
	}
}
