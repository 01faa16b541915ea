package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/mvd-project/mvd/internal/lancedbtest"
)

// TestViewRetentionAndOptimize: create and alter store the retention in
// the view's metadata, bad values are usage errors that commit nothing,
// and optimize compacts the view and removes its old versions (LanceDB
// then lists exactly the kept ones, reads the same rows and its refresh is
// a no_op), printing what it did; view show prints fragments, versions
// and bytes.
func TestViewRetentionAndOptimize(t *testing.T) {
	lancedbtest.Require(t)
	dir := t.TempDir()
	d := lancedbtest.StartDriver(t, dir)
	if _, err := d.CreateTable("src", lancedbtest.SourceSchema(), lancedbtest.SourceRows(0, 20, 0)); err != nil {
		t.Fatal(err)
	}
	ok := func(args ...string) string {
		t.Helper()
		code, stdout, stderr := runCLI(args...)
		if code != 0 {
			t.Fatalf("mvd %s: exit %d: %s", strings.Join(args, " "), code, stderr)
		}
		return stdout
	}
	meta := func() map[string]string {
		t.Helper()
		s, err := d.Schema("v", 0)
		if err != nil {
			t.Fatal(err)
		}
		return s.Metadata
	}
	ok("view", "create", "--db", dir, "v", "--source", "src", "--where", "amount > 10", "--keep-versions-for", "2s", "--keep-versions", "5")
	if md := meta(); md["mv.keep_versions_for_ms"] != "2000" || md["mv.keep_versions"] != "5" {
		t.Fatalf("metadata after create: %v", md)
	}
	out := ok("view", "alter", "--db", dir, "v", "--keep-versions", "3")
	if want := "altered view v: keeps the versions of the last 2s and at least the last 3 (view version"; !strings.HasPrefix(out, want) {
		t.Fatalf("alter output %q, want prefix %q", out, want)
	}
	if md := meta(); md["mv.keep_versions_for_ms"] != "2000" || md["mv.keep_versions"] != "3" || md["mv.auto_refresh"] != "" {
		t.Fatalf("metadata after alter: %v", md)
	}
	before, _ := d.Version("v")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"view", "alter", "--db", dir, "v", "--keep-versions", "0"}, "--keep-versions must be at least 1"},
		{[]string{"view", "alter", "--db", dir, "v", "--keep-versions-for", "-1s"}, "--keep-versions-for must not be negative"},
		{[]string{"view", "alter", "--db", dir, "v", "--keep-versions-for", "later"}, "invalid value \"later\" for --keep-versions-for"},
		{[]string{"view", "optimize", "--db", dir, "v", "--keep-versions", "-2"}, "--keep-versions must be at least 1"},
		{[]string{"view", "create", "--db", dir, "w", "--source", "src", "--keep-versions", "0"}, "--keep-versions must be at least 1"},
	} {
		code, _, stderr := runCLI(c.args...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("mvd %s: exit %d, stderr %q; want 2 and %q", strings.Join(c.args, " "), code, stderr, c.want)
		}
	}
	if after, _ := d.Version("v"); after != before {
		t.Errorf("refused commands committed: version %d -> %d", before, after)
	}
	if code, _, _ := runCLI("view", "show", "--db", dir, "w"); code == 0 {
		t.Error("a create with a bad --keep-versions made the view")
	}

	for i := range int64(8) {
		if _, err := d.Add("src", lancedbtest.SourceRows(20+3*i, 23+3*i, 0)); err != nil {
			t.Fatal(err)
		}
		ok("view", "refresh", "--db", dir, "v")
	}
	var o optimizeJSON
	if err := json.Unmarshal([]byte(ok("view", "optimize", "--db", dir, "v", "--keep-versions-for", "0s", "--keep-versions", "1", "--json")), &o); err != nil {
		t.Fatal(err)
	}
	if o.FragmentsBefore < 8 || o.FragmentsAfter != 1 || o.CompactionSteps == 0 || o.VersionsKept != 1 || o.VersionsRemoved == 0 ||
		o.BytesReclaimed <= 0 || o.BytesAfter >= o.BytesBefore || o.FilesRemoved <= o.VersionsRemoved || o.KeepVersions != 1 {
		t.Fatalf("optimize: %+v", o)
	}
	versions, err := d.Versions("v")
	if err != nil || !slices.Equal(versions, []uint64{o.Version}) {
		t.Fatalf("LanceDB lists versions %v (%v), want only %d", versions, err, o.Version)
	}
	r, err := d.Refresh("v", lancedbtest.RefreshOptions{})
	if err != nil || r.Mode != "no_op" {
		t.Fatalf("LanceDB's refresh after optimize: %+v, %v", r, err)
	}
	n, err := d.Count("v", 0)
	if want, _ := d.Count("src", 0); err != nil || n == 0 || n >= want {
		t.Fatalf("LanceDB counts %d rows in the view (%v), source %d", n, err, want)
	}
	var show struct {
		Rows    uint64 `json:"rows"`
		Storage struct {
			Fragments, Versions int
			Bytes               int64
		} `json:"storage"`
	}
	if err := json.Unmarshal([]byte(ok("view", "show", "--db", dir, "v", "--json")), &show); err != nil {
		t.Fatal(err)
	}
	if show.Rows != n || show.Storage.Fragments != 1 || show.Storage.Versions != 1 || show.Storage.Bytes != o.BytesAfter {
		t.Fatalf("view show after optimize: %+v; optimize said %+v", show, o)
	}
	if text := ok("view", "show", "--db", dir, "v"); !strings.Contains(text, "storage:  1 fragment, 1 version, ") {
		t.Fatalf("view show prints no storage line:\n%s", text)
	}
	text := ok("view", "optimize", "--db", dir, "v")
	if !strings.Contains(text, "cleanup:    0 versions removed (1 kept; last 2s, at least 3)") {
		t.Fatalf("a second optimize (the view's own retention):\n%s", text)
	}
}
