package main

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/mvd-project/mvd/checkpoint"
	"github.com/mvd-project/mvd/daemon"
	"github.com/mvd-project/mvd/daemon/wire"
)

// showHistory runs `mvd view show --json` and returns its history.
func showHistory(t *testing.T, dir string) []checkpoint.RefreshRecord {
	t.Helper()
	code, out, errOut := runCLI("view", "show", "--db", dir, "v", "--json")
	if code != 0 || errOut != "" {
		t.Fatalf("view show: exit %d, stderr %q", code, errOut)
	}
	var show struct {
		SourceTable string                     `json:"sourceTable"`
		History     []checkpoint.RefreshRecord `json:"history"`
	}
	if err := json.Unmarshal([]byte(out), &show); err != nil || show.SourceTable != "src" || show.History == nil {
		t.Fatalf("view show --json: %v: %s", err, out)
	}
	return show.History
}

// TestViewShowHistory: `mvd view show` prints the refreshes mvd serve
// recorded: asked of the running daemon (which holds the store), and read
// from the store once the daemon has stopped; a database never served
// shows an empty history.
func TestViewShowHistory(t *testing.T) {
	dir := viewDB(t)
	if code, _, errOut := runCLI("view", "create", "--db", dir, "v", "--source", "src", "--select", "id"); code != 0 {
		t.Fatalf("create: %s", errOut)
	}
	if h := showHistory(t, dir); len(h) != 0 {
		t.Fatalf("history before any daemon: %+v", h)
	}
	fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	daemon.BindCommandFlags(fs)
	if err := fs.Parse([]string{"--db", dir, "--admin-addr", "127.0.0.1:0", "--create-grace", "0"}); err != nil {
		t.Fatal(err)
	}
	cfg, err := daemon.LoadConfig(fs, nil)
	if err != nil {
		t.Fatal(err)
	}
	deps, err := wire.Deps(cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	srv := daemon.NewServer(cfg, deps)
	drain, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(drain, context.Background()) }()
	<-srv.Started()
	var live []checkpoint.RefreshRecord
	for deadline := time.Now().Add(30 * time.Second); len(live) == 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no refresh recorded by the daemon")
		}
		live = showHistory(t, dir)
	}
	if r := live[0]; r.View != "v" || r.Mode != "rebuild" || r.SourceVersion != 9 || r.Error != "" {
		t.Fatalf("history from the daemon: %+v", live)
	}
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := deps.Close(); err != nil {
		t.Fatal(err)
	}
	stored := showHistory(t, dir)
	if len(stored) != len(live) || stored[0].Seq != live[0].Seq || stored[0].ViewVersion != live[0].ViewVersion {
		t.Fatalf("history from the store %+v, from the daemon %+v", stored, live)
	}
	code, out, _ := runCLI("view", "show", "--db", dir, "v")
	if code != 0 || !strings.Contains(out, "recent refreshes:\n") || !strings.Contains(out, "rebuild, source version 0 -> 9") {
		t.Fatalf("view show: exit %d:\n%s", code, out)
	}
}
