// Package mvdbuild builds the mvd binary for tests that run it as a
// process (cmd/mvd, bench, internal/scaleout), so they all build it the
// same way. Caching a build, e.g. once per test binary, is the caller's
// choice: a link takes seconds, and only the caller knows its binary's
// lifetime.
package mvdbuild

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"runtime"
)

// Package is the import path Build builds.
const Package = "github.com/mvd-project/mvd/cmd/mvd"

// Build builds cmd/mvd into dir/mvd and returns the binary's path. It
// works from any package's tests: go build runs in this package's source
// directory, inside the module, whatever the caller's working directory.
// The error carries go build's output.
func Build(dir string) (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "", fmt.Errorf("build mvd: cannot locate the mvdbuild source file")
	}
	bin := filepath.Join(dir, "mvd")
	cmd := exec.Command("go", "build", "-o", bin, Package)
	cmd.Dir = filepath.Dir(file)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build -o %s %s: %w\n%s", bin, Package, err, out)
	}
	return bin, nil
}
