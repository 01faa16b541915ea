package main

import (
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// Set only by the linker (make build: -ldflags "-X main.linkedCommit=…"),
// for builds the Go toolchain cannot stamp (a git worktree, -buildvcs=false);
// never assigned at run time.
var (
	linkedVersion  string // git describe --tags --always --dirty
	linkedCommit   string // git rev-parse HEAD
	linkedModified string // "true" if the working tree had changes
)

// buildInfo is what `mvd version` reports: the module version and the VCS
// commit the Go toolchain stamped into the binary (go build from a git
// checkout), or the linker flags of make build; `go run` and tests have
// no commit.
type buildInfo struct {
	Version    string `json:"version"`
	Commit     string `json:"commit"`      // full hash, or "unknown"
	CommitTime string `json:"commit_time"` // RFC 3339, or ""
	Modified   bool   `json:"modified"`    // built with uncommitted changes
	Go         string `json:"go"`
	Platform   string `json:"platform"`
}

func readBuildInfo() buildInfo {
	b := buildInfo{Version: "devel", Commit: "unknown", Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if linkedVersion != "" {
		b.Version = linkedVersion
	}
	if linkedCommit != "" {
		b.Commit = linkedCommit
		b.Modified = linkedModified == "true"
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return b
	}
	if v := info.Main.Version; v != "" && v != "(devel)" && linkedVersion == "" {
		b.Version = v
	}
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Commit = s.Value
		case "vcs.time":
			b.CommitTime = s.Value
		case "vcs.modified":
			b.Modified = s.Value == "true"
		}
	}
	return b
}

// String is the one line of `mvd --version`:
// "mvd v0.0.0-…+dirty (commit 1a2b…, modified; go1.26.0 linux/amd64)".
func (b buildInfo) String() string {
	commit := "commit " + b.Commit
	if b.Modified {
		commit += ", modified"
	}
	return fmt.Sprintf("mvd %s (%s; %s %s)", b.Version, commit, b.Go, b.Platform)
}

func newVersionCmd(stdout io.Writer) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "print mvd's version and the commit it was built from",
		Long: `Version prints mvd's version, the git commit it was built from (with
", modified" if the working tree had uncommitted changes), the Go version and
the platform. The same line as 'mvd --version'.`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			b := readBuildInfo()
			if asJSON {
				return json.NewEncoder(stdout).Encode(b)
			}
			_, err := fmt.Fprintln(stdout, b.String())
			return err
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, `print one JSON object: {"version","commit","commit_time","modified","go","platform"}`)
	return cmd
}
