package lance_test

import (
	"context"
	"encoding/binary"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/mvd-project/mvd/internal/lancedbtest"
	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/vfs"
)

// copyFixture copies a committed fixture table into a temporary directory,
// so a test can add or damage files.
func copyFixture(t *testing.T, name string) string {
	t.Helper()
	src := filepath.Join(lancedbtest.FixturesDir(t), name+".lance")
	dst := filepath.Join(t.TempDir(), name+".lance")
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	os.WriteFile(file, []byte("x"), 0o644)
	os.MkdirAll(filepath.Join(dir, "empty", "_versions"), 0o755)
	for _, tc := range []struct {
		name, path string
	}{
		{"missing", filepath.Join(dir, "nope")},
		{"a file", file},
		{"no _versions", dir},
		{"no manifest", filepath.Join(dir, "empty")},
	} {
		_, err := lance.Open(context.Background(), vfs.OS(), tc.path)
		if !errors.Is(err, lance.ErrNotATable) {
			t.Errorf("%s: err = %v, want ErrNotATable", tc.name, err)
		}
		if err != nil && !strings.Contains(err.Error(), tc.path) {
			t.Errorf("%s: error %q does not name the path", tc.name, err)
		}
	}
}

func TestVersionListingSkipsNonManifests(t *testing.T) {
	root := copyFixture(t, "history_stable_v21")
	versions := filepath.Join(root, "_versions")
	// What a directory can hold besides committed manifests: a detached
	// version, a staging name, a temp file, and a hint that lies.
	for name, body := range map[string]string{
		"d99.manifest":                         "x",
		"18446744073709551605.manifest#1":      "x",
		".tmp_18446744073709551605.manifest_x": "x",
		"latest_version_hint.json":             `{"version":99}`,
	} {
		if err := os.WriteFile(filepath.Join(versions, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tbl, err := lance.Open(context.Background(), vfs.OS(), root)
	if err != nil {
		t.Fatal(err)
	}
	latest, err := tbl.LatestVersion(context.Background())
	if err != nil || latest != 9 {
		t.Fatalf("LatestVersion = %d, %v; want 9", latest, err)
	}
	if _, err := tbl.Checkout(context.Background(), 10); !errors.Is(err, lance.ErrVersionNotFound) {
		t.Errorf("Checkout(10): err = %v, want ErrVersionNotFound", err)
	}
	// Mixing V1 and V2 names is refused, as Lance does.
	os.WriteFile(filepath.Join(versions, "3.manifest"), []byte("x"), 0o644)
	if _, err := tbl.Versions(context.Background()); !errors.Is(err, lance.ErrCorrupt) {
		t.Errorf("mixed naming: err = %v, want ErrCorrupt", err)
	}
}

func TestCheckoutMissingAndCorrupt(t *testing.T) {
	root := copyFixture(t, "v1_names_stable")
	tbl, err := lance.Open(context.Background(), vfs.OS(), root)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tbl.Checkout(context.Background(), 77); !errors.Is(err, lance.ErrVersionNotFound) {
		t.Errorf("Checkout(77): err = %v, want ErrVersionNotFound", err)
	}
	path := filepath.Join(root, "_versions", "2.manifest")
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	damage := map[string]func([]byte) []byte{
		"truncated":    func(b []byte) []byte { return b[:len(b)/2] },
		"empty":        func(b []byte) []byte { return nil },
		"bad magic":    func(b []byte) []byte { b[len(b)-1] = 'X'; return b },
		"bad position": func(b []byte) []byte { binary.LittleEndian.PutUint64(b[len(b)-16:], 1<<40); return b },
		"garbage section": func(b []byte) []byte {
			pos := binary.LittleEndian.Uint64(b[len(b)-16:])
			b[pos+4] = 0xff
			b[pos+5] = 0xff
			return b
		},
	}
	for name, fn := range damage {
		b := fn(append([]byte(nil), good...))
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := tbl.Checkout(context.Background(), 2)
		if !errors.Is(err, lance.ErrCorrupt) {
			t.Errorf("%s manifest: err = %v, want ErrCorrupt", name, err)
			continue
		}
		var le *lance.Error
		if !errors.As(err, &le) || le.Version != 2 || !strings.Contains(err.Error(), "2.manifest") {
			t.Errorf("%s manifest: error %q does not name the table version and file", name, err)
		}
	}
}

// TestUnknownReaderFlagsRefused appends a reader flag this reader does not
// know to a real manifest: it must be refused, never read.
func TestUnknownReaderFlagsRefused(t *testing.T) {
	root := copyFixture(t, "v1_names_stable")
	path := filepath.Join(root, "_versions", "1.manifest")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, flag := range []uint64{1 << 6, 1 << 12} {
		b := withReaderFlags(raw, flag|lance.FlagStableRowIDs)
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		tbl, err := lance.Open(context.Background(), vfs.OS(), root)
		if err != nil {
			t.Fatal(err)
		}
		_, err = tbl.Checkout(context.Background(), 1)
		if !errors.Is(err, lance.ErrUnsupported) || !strings.Contains(err.Error(), "flag") {
			t.Errorf("flag %#x: err = %v, want ErrUnsupported naming the flag", flag, err)
		}
	}
}

// withReaderFlags rewrites a manifest file with reader_feature_flags (field
// 9) replaced, keeping the framing valid. Appending the field overrides any
// earlier value (protobuf last-one-wins).
func withReaderFlags(raw []byte, flags uint64) []byte {
	pos := binary.LittleEndian.Uint64(raw[len(raw)-16:])
	n := binary.LittleEndian.Uint32(raw[pos:])
	section := append([]byte(nil), raw[pos+4:pos+4+uint64(n)]...)
	section = protowire.AppendTag(section, 9, protowire.VarintType)
	section = protowire.AppendVarint(section, flags)
	out := append([]byte(nil), raw[:pos]...)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(section)))
	out = append(out, section...)
	out = binary.LittleEndian.AppendUint64(out, pos)
	return append(out, raw[len(raw)-8:]...)
}

func TestChangesArguments(t *testing.T) {
	tbl, err := lance.Open(context.Background(), vfs.OS(), filepath.Join(lancedbtest.FixturesDir(t), "history_stable_v21.lance"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tbl.Changes(context.Background(), 5, 2); err == nil {
		t.Error("Changes(5, 2) succeeded")
	}
	if _, err := tbl.Changes(context.Background(), 2, 42); !errors.Is(err, lance.ErrVersionNotFound) {
		t.Errorf("Changes(2, 42): err = %v, want ErrVersionNotFound", err)
	}
	cs, err := tbl.Changes(context.Background(), 3, 3)
	if err != nil || !cs.IsEmpty() {
		t.Errorf("Changes(3, 3) = %v, %v; want empty", cs, err)
	}
}

// TestChangesReadNoDataFiles proves change sets come from metadata alone.
func TestChangesReadNoDataFiles(t *testing.T) {
	root := filepath.Join(lancedbtest.FixturesDir(t), "history_stable_v22.lance")
	cfs := vfs.NewCountingFS(vfs.OS(), func(name string) {
		if strings.Contains(filepath.ToSlash(name), "/data/") {
			t.Errorf("opened data file %s", name)
		}
	})
	tbl, err := lance.Open(context.Background(), cfs, root)
	if err != nil {
		t.Fatal(err)
	}
	for from := uint64(1); from < 13; from++ {
		if _, err := tbl.Changes(context.Background(), from, 13); err != nil {
			t.Fatal(err)
		}
	}
	if cfs.Opens() == 0 {
		t.Fatal("counting FS saw no reads")
	}
}
