package main

import (
	"encoding/json"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// treeOf lists the files under dir: a refused command must leave it as
// it was.
func treeOf(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestViewBudgetFlags checks the budget flags of view refresh and view
// alter: every refusal of LanceDB Enterprise's rules exits 2, names the
// rule and changes nothing; a budget too small exits 1 saying how much
// the refresh needs and commits nothing; a valid budget refreshes; alter
// stores the view's default beside its policy.
func TestViewBudgetFlags(t *testing.T) {
	dir := viewDB(t)
	if code, _, errOut := runCLI("view", "create", "--db", dir, "v", "--source", "src"); code != 0 {
		t.Fatalf("create: %s", errOut)
	}
	full := []string{"--cpu-millis", "1000", "--memory-bytes", "1073741824", "--gpu-count", "0"}
	refused := []struct {
		flags []string
		want  string
	}{
		{[]string{"--cpu-millis", "1000"}, "requires all three of cpu_millis, memory_bytes and gpu_count (missing memory_bytes, gpu_count)"},
		{[]string{"--memory-bytes", "1048576"}, "missing cpu_millis, gpu_count"},
		{[]string{"--cpu-millis", "1000", "--memory-bytes", "1048576"}, "missing gpu_count"},
		{[]string{"--cpu-millis", "-1", "--memory-bytes", "1048576", "--gpu-count", "0"}, "cpu_millis must not be negative"},
		{[]string{"--cpu-millis", "1000", "--memory-bytes", "-1", "--gpu-count", "0"}, "memory_bytes must not be negative"},
		{[]string{"--gpu-count", "-2"}, "gpu_count must not be negative"},
		{[]string{"--gpu-count", "1"}, "GPU"},
		{[]string{"--gpu-class", "a100"}, "GPU"},
		{append(slices.Clone(full[:4]), "--gpu-count", "2"), "GPU"},
		{[]string{"--cpu-millis", "0", "--memory-bytes", "1048576", "--gpu-count", "0"}, "cpu_millis = 0"},
	}
	before := treeOf(t, dir)
	for _, c := range refused {
		for _, cmd := range [][]string{
			append([]string{"view", "refresh", "--db", dir, "v"}, c.flags...),
			append([]string{"view", "alter", "--db", dir, "v"}, c.flags...),
		} {
			code, out, errOut := runCLI(cmd...)
			if code != 2 || out != "" || !strings.Contains(errOut, c.want) {
				t.Errorf("%v: exit %d, stdout %q, stderr %q; want 2 naming %q", cmd, code, out, errOut, c.want)
			}
		}
	}
	if after := treeOf(t, dir); !slices.Equal(before, after) {
		t.Fatalf("refused budgets changed the database:\n%v\n%v", before, after)
	}
	// Too small: fails before any work, saying what it needs.
	code, _, errOut := runCLI("view", "refresh", "--db", dir, "v", "--cpu-millis", "1000", "--memory-bytes", "1024", "--gpu-count", "0")
	if code != 1 || !strings.Contains(errOut, "needs at least memory_bytes = ") || !strings.Contains(errOut, "nothing was committed") {
		t.Fatalf("too small: exit %d: %s", code, errOut)
	}
	if after := treeOf(t, dir); !slices.Equal(before, after) {
		t.Fatalf("a refresh over budget changed the database:\n%v\n%v", before, after)
	}
	// A GPU cap alone (CPU only) and a full budget are fine.
	if code, out, errOut := runCLI("view", "refresh", "--db", dir, "v", "--json", "--gpu-count", "0"); code != 0 || !strings.Contains(out, `"mode":"rebuild"`) {
		t.Fatalf("gpu-count 0: exit %d: %s%s", code, out, errOut)
	}
	if code, out, errOut := runCLI(append([]string{"view", "refresh", "--db", dir, "v", "--full", "--json"}, full...)...); code != 0 || !strings.Contains(out, `"mode":"rebuild"`) {
		t.Fatalf("full budget: exit %d: %s%s", code, out, errOut)
	}
	// alter stores the default; a later partial change is checked on the
	// merged budget.
	code, out, errOut := runCLI(append([]string{"view", "alter", "--db", dir, "v", "--json"}, full...)...)
	if code != 0 {
		t.Fatalf("alter: exit %d: %s", code, errOut)
	}
	var got struct {
		Budget map[string]any `json:"budget"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil || got.Budget["cpu_millis"] != 1000.0 || got.Budget["memory_bytes"] != 1073741824.0 || got.Budget["gpu_count"] != 0.0 {
		t.Fatalf("alter --json: %s (%v)", out, err)
	}
	if code, out, errOut := runCLI("view", "alter", "--db", dir, "v", "--cpu-millis", "2000"); code != 0 || !strings.Contains(out, "cpu_millis=2000, memory_bytes=1073741824, gpu_count=0") {
		t.Fatalf("alter --cpu-millis over a stored budget: exit %d: %s%s", code, out, errOut)
	}
	before = treeOf(t, dir)
	if code, _, errOut := runCLI("view", "alter", "--db", dir, "v", "--gpu-class", "h100"); code != 2 || !strings.Contains(errOut, "GPU") {
		t.Fatalf("alter --gpu-class: exit %d: %s", code, errOut)
	}
	if after := treeOf(t, dir); !slices.Equal(before, after) {
		t.Fatal("a refused alter changed the view")
	}
}
