package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mvd-project/mvd/internal/lancedbtest"
)

// eventsStamp describes a cached events table: what it was written with and
// the version it was left at, so a reuse can check it got the same table.
type eventsStamp struct {
	Rows    uint64 `json:"rows"`
	Batch   uint64 `json:"batch"`
	Seed    int    `json:"seed"`
	Version uint64 `json:"version"`
}

// prepareEvents leaves table `events` (rows events written by LanceDB in
// commits of batch rows, stable row ids) in the driver's database dir.
// With cache != "" the table is written once into cache/events-ROWS-BATCH-SEED
// and copied from there on later runs (writing 5M events takes ~80 s on a
// shared 2-core machine; a copy, a few seconds).
func prepareEvents(tb testing.TB, d *lancedbtest.Driver, cache string, rows, batch uint64, seed int) {
	tb.Helper()
	dir := d.Dir()
	if cache == "" {
		start := time.Now()
		info, err := d.CreateEvents("events", rows, batch, seed)
		if err != nil {
			tb.Fatal(err)
		}
		tb.Logf("events: %d rows in %d LanceDB commits (%.1f s)", info.Rows, info.Commits, time.Since(start).Seconds())
		return
	}
	want := eventsStamp{Rows: rows, Batch: batch, Seed: seed}
	src := filepath.Join(cache, fmt.Sprintf("events-%d-%d-%d", rows, batch, seed))
	stampPath := filepath.Join(src, "stamp.json")
	var got eventsStamp
	if b, err := os.ReadFile(stampPath); err != nil || json.Unmarshal(b, &got) != nil ||
		got.Rows != rows || got.Batch != batch || got.Seed != seed {
		if err := os.RemoveAll(src); err != nil {
			tb.Fatal(err)
		}
		if err := os.MkdirAll(src, 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := d.Connect(src); err != nil {
			tb.Fatal(err)
		}
		start := time.Now()
		info, err := d.CreateEvents("events", rows, batch, seed)
		if err != nil {
			tb.Fatal(err)
		}
		tb.Logf("events: %d rows in %d LanceDB commits (%.1f s), cached in %s", info.Rows, info.Commits, time.Since(start).Seconds(), src)
		want.Version = info.Version
		b, _ := json.Marshal(want)
		// The stamp is written last: a run interrupted while writing leaves no stamp.
		if err := os.WriteFile(stampPath, b, 0o644); err != nil {
			tb.Fatal(err)
		}
		if err := d.Connect(dir); err != nil {
			tb.Fatal(err)
		}
		got = want
	} else {
		tb.Logf("events: reusing %s (%d rows, version %d)", src, got.Rows, got.Version)
	}
	start := time.Now()
	if err := copyTree(filepath.Join(src, "events.lance"), filepath.Join(dir, "events.lance")); err != nil {
		tb.Fatal(err)
	}
	v, err := d.Version("events")
	if err != nil {
		tb.Fatal(err)
	}
	n, err := d.Count("events", 0)
	if err != nil {
		tb.Fatal(err)
	}
	if v != got.Version || n != rows {
		tb.Fatalf("copied events: version %d, %d rows; the cache says version %d, %d rows", v, n, got.Version, rows)
	}
	tb.Logf("events: copied in %.1f s", time.Since(start).Seconds())
}

// copyTree copies directory src to dst (which must not exist) file by file.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		if e.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		in, err := os.Open(p)
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, in); err != nil {
			out.Close()
			return err
		}
		return out.Close()
	})
}
