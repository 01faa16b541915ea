package main

import (
	"strings"
	"testing"

	"github.com/mvd-project/mvd/internal/lancedbtest"
)

// TestViewPolicyFlags: create and alter store the policy in the view's
// metadata (read back by LanceDB), alters keep the watermark (LanceDB's
// refresh stays no_op), and bad combinations are usage errors that commit
// nothing.
func TestViewPolicyFlags(t *testing.T) {
	lancedbtest.Require(t)
	dir := t.TempDir()
	d := lancedbtest.StartDriver(t, dir)
	if _, err := d.CreateTable("src", lancedbtest.SourceSchema(), lancedbtest.SourceRows(0, 20, 0)); err != nil {
		t.Fatal(err)
	}
	meta := func(view string) map[string]string {
		t.Helper()
		s, err := d.Schema(view, 0)
		if err != nil {
			t.Fatal(err)
		}
		return s.Metadata
	}
	version := func(view string) uint64 {
		t.Helper()
		v, err := d.Version(view)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	ok := func(args ...string) string {
		t.Helper()
		code, stdout, stderr := runCLI(args...)
		if code != 0 {
			t.Fatalf("mvd %s: exit %d: %s", strings.Join(args, " "), code, stderr)
		}
		return stdout
	}
	ok("view", "create", "--db", dir, "plain", "--source", "src")
	if md := meta("plain"); md["mv.auto_refresh"] != "" {
		t.Fatalf("a view created without policy flags has %v", md)
	}
	ok("view", "create", "--db", dir, "v", "--source", "src", "--where", "amount > 10", "--auto-refresh", "interval", "--interval", "5s", "--debounce", "20ms")
	md := meta("v")
	if md["mv.auto_refresh"] != "interval" || md["mv.auto_refresh_interval_seconds"] != "5" || md["mv.auto_refresh_debounce_ms"] != "20" || md["mv.freshness_target_ms"] != "" {
		t.Fatalf("metadata after create: %v", md)
	}
	if got := version("v"); got != 1 {
		t.Fatalf("view create with policy flags left the view at version %d, want 1 (one commit)", got)
	}
	if _, err := d.Refresh("v", lancedbtest.RefreshOptions{}); err != nil {
		t.Fatal(err)
	}

	out := ok("view", "alter", "--db", dir, "v", "--freshness-target", "1.5s")
	if want := "altered view v: auto-refresh interval every 5s, debounce 20ms, freshness target 1.5s (view version"; !strings.HasPrefix(out, want) {
		t.Fatalf("alter output %q, want prefix %q", out, want)
	}
	if md := meta("v"); md["mv.freshness_target_ms"] != "1500" || md["mv.auto_refresh_interval_seconds"] != "5" {
		t.Fatalf("metadata after alter: %v", md)
	}
	out = ok("view", "alter", "--db", dir, "v", "--auto-refresh", "on-commit", "--debounce", "0", "--json")
	if want := `{"view":"v","auto_refresh":"on-commit","freshness_target_ms":1500,"version":`; !strings.HasPrefix(out, want) {
		t.Fatalf("alter --json %q, want prefix %q", out, want)
	}
	md = meta("v")
	if md["mv.auto_refresh"] != "on-commit" || md["mv.auto_refresh_interval_seconds"] != "" || md["mv.auto_refresh_debounce_ms"] != "" {
		t.Fatalf("metadata after switching to on-commit: %v", md)
	}
	before := version("v")
	r, err := d.Refresh("v", lancedbtest.RefreshOptions{})
	if err != nil || r.Mode != "no_op" || r.Version != before {
		t.Fatalf("LanceDB refresh after two alters: %+v, %v; want no_op at %d", r, err, before)
	}
	ok("view", "alter", "--db", dir, "v", "--auto-refresh", "manual")
	if md := meta("v"); md["mv.auto_refresh"] != "manual" {
		t.Fatalf("metadata after manual: %v", md)
	}

	before = version("v")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"view", "alter", "--db", dir, "v"}, "view alter needs at least one of --auto-refresh"},
		{[]string{"view", "alter", "--db", dir, "v", "--auto-refresh", "sometimes"}, "--auto-refresh must be on-commit, interval or manual"},
		{[]string{"view", "alter", "--db", dir, "v", "--auto-refresh", "interval"}, "needs --interval DURATION > 0"},
		{[]string{"view", "alter", "--db", dir, "v", "--auto-refresh", "interval", "--interval", "0s"}, "needs --interval DURATION > 0"},
		{[]string{"view", "alter", "--db", dir, "v", "--interval", "5s"}, "view v is manual"},
		{[]string{"view", "alter", "--db", dir, "v", "--debounce", "-1s"}, "--debounce must not be negative"},
		{[]string{"view", "alter", "--db", dir, "v", "--debounce", "soon"}, "invalid value \"soon\" for --debounce"},
		{[]string{"view", "create", "--db", dir, "w", "--source", "src", "--interval", "5s"}, "--interval applies only to --auto-refresh interval"},
	} {
		code, _, stderr := runCLI(c.args...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("mvd %s: exit %d, stderr %q; want 2 and %q", strings.Join(c.args, " "), code, stderr, c.want)
		}
	}
	if after := version("v"); after != before {
		t.Errorf("refused alters committed: version %d -> %d", before, after)
	}
	if code, _, _ := runCLI("view", "show", "--db", dir, "w"); code == 0 {
		t.Error("a create with bad policy flags made the view")
	}
	if code, _, stderr := runCLI("view", "alter", "--db", dir, "nope", "--auto-refresh", "manual"); code != 1 || !strings.Contains(stderr, "nope") {
		t.Errorf("alter of a missing view: exit %d, %q", code, stderr)
	}
}

// TestPolicyAndSubscribeHelp: the new commands' help names their flags
// with value names and describes every one.
func TestPolicyAndSubscribeHelp(t *testing.T) {
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"subscribe", "--help"}, []string{"--db DIR", "--view NAME", "--json", "--wait", "--nats-url URL", "--nats-creds FILE", "--nats-tls-ca FILE", `{"subscribed":[...]`, "reconnects"}},
		{[]string{"view", "alter", "--help"}, []string{"--auto-refresh MODE", "--interval DURATION", "--debounce DURATION", "--freshness-target DURATION", "mvd_view_freshness_target_missed"}},
		{[]string{"view", "create", "--help"}, []string{"--auto-refresh MODE", "--interval DURATION"}},
		{[]string{"view", "--help"}, []string{"alter"}},
		{[]string{"--help"}, []string{"subscribe"}},
	} {
		code, stdout, stderr := runCLI(c.args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", c.args, code, stderr)
		}
		for _, w := range c.want {
			if !strings.Contains(stdout, w) {
				t.Errorf("mvd %s lacks %q:\n%s", strings.Join(c.args, " "), w, stdout)
			}
		}
		for _, l := range strings.Split(stdout, "\n") {
			if f := strings.Fields(l); len(f) > 0 && strings.HasPrefix(f[0], "--") && len(f) < 3 {
				t.Errorf("mvd %s: flag without a description: %q", strings.Join(c.args, " "), l)
			}
		}
	}
}
