package checkpoint

import (
	"bytes"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestCorruptStoreMovedAside: a damaged MANIFEST or table file (real
// Badger files, bytes flipped) no longer stops Open: the store is a cache,
// so the damaged directory is moved aside (kept), a new one is started and
// a warning says so.
func TestCorruptStoreMovedAside(t *testing.T) {
	for _, tc := range []struct {
		name    string
		corrupt func(t *testing.T, dir string)
	}{
		{"MANIFEST", func(t *testing.T, dir string) { flip(t, filepath.Join(dir, "MANIFEST"), 12) }},
		{"sst", func(t *testing.T, dir string) {
			ssts, _ := filepath.Glob(filepath.Join(dir, "*.sst"))
			if len(ssts) == 0 {
				t.Fatal("no table file written")
			}
			st, err := os.Stat(ssts[0])
			if err != nil {
				t.Fatal(err)
			}
			flip(t, ssts[0], st.Size()-40) // inside the table's checksummed index
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			dir := filepath.Join(t.TempDir(), "state")
			s, err := Open(dir, Options{})
			if err != nil {
				t.Fatal(err)
			}
			for i := range 200 {
				if err := s.PutBlob(ctx, "v"+string(rune('a'+i%26))+string(rune('a'+i/26)), "k", []byte(time.Now().String())); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			tc.corrupt(t, dir)
			var logs bytes.Buffer
			s, err = Open(dir, Options{Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))})
			if err != nil {
				t.Fatalf("open a damaged store: %v", err)
			}
			defer s.Close()
			if !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), "moved aside") {
				t.Errorf("no warning of the move:\n%s", logs.String())
			}
			aside, _ := filepath.Glob(dir + ".corrupt-*")
			if len(aside) != 1 {
				t.Fatalf("damaged store kept as %v, want one .corrupt-* directory", aside)
			}
			if _, err := os.Stat(filepath.Join(aside[0], "MANIFEST")); err != nil {
				t.Errorf("the damaged files are not kept: %v", err)
			}
			if _, err := s.Blob(ctx, "vaa", "k"); !errors.Is(err, ErrNotFound) {
				t.Errorf("new store: %v, want empty", err)
			}
			if err := s.PutBlob(ctx, "w", "k", []byte("1")); err != nil {
				t.Errorf("write to the new store: %v", err)
			}
		})
	}
}

func flip(t *testing.T, path string, at int64) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if at < 0 || at >= int64(len(b)) {
		t.Fatalf("%s has %d bytes, no byte %d", path, len(b), at)
	}
	b[at] ^= 0x5a
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}
