package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mvd-project/mvd/matview"
)

// TestViewCompactFlags: view create and alter store the compaction policy
// in the view's metadata (flags not given keep their value), alter's
// --json reports it, and a bad percentage is a usage error.
func TestViewCompactFlags(t *testing.T) {
	dir := filepath.Dir(nullStructTable(t, 10))
	run := func(want int, args ...string) string {
		t.Helper()
		code, stdout, stderr := runCLI(args...)
		if code != want {
			t.Fatalf("mvd %s: exit %d, want %d: %s", strings.Join(args, " "), code, want, stderr)
		}
		return stdout
	}
	policy := func() matview.CompactPolicy {
		t.Helper()
		db, err := matview.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		v, err := db.OpenView(context.Background(), "v")
		if err != nil {
			t.Fatal(err)
		}
		info, err := v.Info(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		p, err := matview.CompactPolicyFromMetadata(info.Metadata, matview.CompactPolicy{SmallFragments: -7, DeletedPercent: -7})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	run(0, "view", "create", "--db", dir, "v", "--source", "src", "--compact-small-fragments", "5")
	if p := policy(); p.SmallFragments != 5 || p.DeletedPercent != matview.DefaultCompactDeletedPercent {
		t.Fatalf("policy after create: %+v", p)
	}
	out := run(0, "view", "alter", "--db", dir, "v", "--compact-deleted-percent", "25")
	if want := "altered view v: compacted beyond 5 small fragments or beyond 25% deleted rows (view version"; !strings.HasPrefix(out, want) {
		t.Fatalf("alter output %q, want prefix %q", out, want)
	}
	out = run(0, "view", "alter", "--db", dir, "v", "--compact-small-fragments", "-1", "--json")
	if !strings.Contains(out, `"compact_small_fragments":-1,"compact_deleted_percent":25}`) {
		t.Fatalf("alter --json: %s", out)
	}
	if p := policy(); p.SmallFragments != -1 || p.DeletedPercent != 25 {
		t.Fatalf("policy after alter: %+v", p)
	}
	run(2, "view", "alter", "--db", dir, "v", "--compact-deleted-percent", "150")
	if p := policy(); p.DeletedPercent != 25 {
		t.Fatalf("a refused alter changed the policy: %+v", p)
	}
}
