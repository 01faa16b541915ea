package main

import (
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/mvd-project/mvd/internal/mvdbuild"
)

// binDir holds the mvd binary the tests that run it as a process share;
// TestMain removes it.
var binDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "mvd-cmd-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// mvdBinary builds cmd/mvd once per test binary (a link takes seconds;
// five tests run it as a process) and returns its path.
func mvdBinary(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		binPath, binErr = mvdbuild.Build(binDir)
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}
