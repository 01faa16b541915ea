// Package lancedbtest runs mvd's LanceDB harness (testdata/lancedb) from Go
// tests: it finds the repository, checks that the pinned LanceDB is
// installed, generates fixture tables at test time and decodes LanceDB's
// answers.
package lancedbtest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// RepoRoot returns the repository root (the directory holding go.mod).
func RepoRoot(tb testing.TB) string {
	tb.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		tb.Fatal("lancedbtest: cannot locate the source file")
	}
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// HarnessDir returns testdata/lancedb.
func HarnessDir(tb testing.TB) string {
	return filepath.Join(RepoRoot(tb), "testdata", "lancedb")
}

// FixturesDir returns testdata/fixtures, the committed fixture tables.
func FixturesDir(tb testing.TB) string {
	return filepath.Join(RepoRoot(tb), "testdata", "fixtures")
}

// Available reports whether node and the pinned LanceDB harness are
// installed, and if not, why. It is the one place that check is written;
// tests call Require, benchmarks that merely lose their comparison call
// Available.
func Available() (ok bool, why string) {
	if _, err := exec.LookPath("node"); err != nil {
		return false, "node is not on PATH"
	}
	pkg := filepath.Join(harnessDir(), "node_modules", "@lancedb", "lancedb", "package.json")
	if _, err := os.Stat(pkg); err != nil {
		return false, "the LanceDB harness is not installed (run `make deps`)"
	}
	return true, ""
}

// Require skips the test when the pinned LanceDB is not installed, except
// under CI (env CI set), where a missing harness is a failure: CI must
// never pass by skipping the differential tests.
func Require(tb testing.TB) {
	tb.Helper()
	if ok, why := Available(); !ok {
		missing(tb, why)
	}
}

// harnessDir is testdata/lancedb, found from this source file.
func harnessDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "testdata", "lancedb")
}

func missing(tb testing.TB, why string) {
	tb.Helper()
	if os.Getenv("CI") != "" {
		tb.Fatalf("lancedbtest: %s", why)
	}
	tb.Skipf("lancedbtest: %s", why)
}

// Generate runs the fixture generator for the named fixtures into a fresh
// temporary directory and returns it. Extra arguments (e.g. "--no-answers")
// are passed through.
func Generate(tb testing.TB, names []string, extra ...string) string {
	tb.Helper()
	Require(tb)
	out := tb.TempDir()
	args := append([]string{"gen.mjs", "--out", out, "--only", join(names)}, extra...)
	RunNode(tb, args...)
	return out
}

// RunNode runs node with args in the harness directory and returns its
// standard output; a failure ends the test with node's standard error.
func RunNode(tb testing.TB, args ...string) []byte {
	tb.Helper()
	Require(tb)
	cmd := exec.Command("node", args...)
	cmd.Dir = HarnessDir(tb)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		tb.Fatalf("node %v: %v\n%s", args, err, stderr.String())
	}
	return stdout.Bytes()
}

func join(names []string) string {
	var b bytes.Buffer
	for i, n := range names {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(n)
	}
	return b.String()
}
