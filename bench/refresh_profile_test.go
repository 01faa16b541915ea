package bench

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mvd-project/mvd/matview"
	"github.com/mvd-project/mvd/plan"
	"github.com/mvd-project/mvd/vfs"
)

// BenchmarkSmallRefresh is the profile of the daemon's common case: one
// row appended to a 10k-row source, one incremental refresh of a view
// through matview (no daemon, no NATS). Cases: "append" writes the row
// into an all-rows view (a data file and the manifest); "untouched" is a
// view the row does not qualify for (the manifest alone: the watermark
// moves). Each runs with fsync and with durability none. The filesystem is
// wrapped to count and time every call by kind and by what it touches, so
// the report says where a refresh's wall time goes: `fsyncs/op` and
// `fsync-ms/op` are the file and directory syncs a refresh makes and what
// they cost.
//
//	go test -run '^$' -bench SmallRefresh -benchtime 200x ./bench/
func BenchmarkSmallRefresh(b *testing.B) {
	for _, c := range []struct {
		name, where string
		rows        uint64
	}{
		{"append", "", 1},
		{"untouched", "kind = 'none'", 0},
	} {
		for _, durability := range []string{vfs.DurabilityFsync, vfs.DurabilityNone} {
			b.Run(c.name+"/"+durability, func(b *testing.B) {
				benchSmallRefresh(b, c.where, c.rows, durability)
			})
		}
	}
}

func benchSmallRefresh(b *testing.B, where string, rows uint64, durability string) {
	ctx := context.Background()
	dir := b.TempDir()
	w := newGoWriter(b, dir, "events", 10_000)
	fsys, err := vfs.WithDurability(vfs.OS(), durability)
	if err != nil {
		b.Fatal(err)
	}
	tfs := &timingFS{FS: fsys, stats: map[string]*opStat{}}
	db, err := matview.OpenWith(dir, matview.Options{FS: tfs})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	sel, err := plan.ParseSelect("id, kind, amount")
	if err != nil {
		b.Fatal(err)
	}
	def := matview.Definition{Select: sel, Where: where}
	v, err := db.CreateView(ctx, "view", "events", def)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := v.Refresh(ctx, matview.RefreshOptions{}); err != nil {
		b.Fatal(err)
	}
	// Warm: one incremental refresh builds the plan and the index.
	if _, err := w.appendOne(ctx); err != nil {
		b.Fatal(err)
	}
	if _, err := v.Refresh(ctx, matview.RefreshOptions{}); err != nil {
		b.Fatal(err)
	}
	tfs.reset()
	var took []time.Duration
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		if _, err := w.appendOne(ctx); err != nil {
			b.Fatal(err)
		}
		tfs.enable(true)
		b.StartTimer()
		t0 := time.Now()
		r, err := v.Refresh(ctx, matview.RefreshOptions{})
		took = append(took, time.Since(t0))
		b.StopTimer()
		tfs.enable(false)
		if err != nil || r.Mode != matview.ModeIncremental || r.RowsWritten != rows {
			b.Fatalf("refresh: %+v %v", r, err)
		}
		b.StartTimer()
	}
	b.StopTimer()
	slices.Sort(took)
	n := float64(b.N)
	var syncs, syncNS float64
	for k, s := range tfs.stats {
		if strings.HasPrefix(k, "sync") {
			syncs += float64(s.n)
			syncNS += float64(s.d)
		}
	}
	b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(took[len(took)*99/100].Microseconds())/1000, "p99-ms")
	b.ReportMetric(syncs/n, "fsyncs/op")
	b.ReportMetric(syncNS/n/1e6, "fsync-ms/op")
	// Printed, not logged: benchmark logs are cut at ten lines.
	if b.N > 1 {
		fmt.Fprintf(os.Stderr, "%s per refresh (load average %s; n=%d):\n%s", b.Name(), loadAvg(), b.N, tfs.table(b.N))
	}
}

// opStat is the count and total time of one kind of call on one kind of
// file.
type opStat struct {
	n int
	d time.Duration
}

// timingFS counts and times the calls of a refresh (only while enabled).
type timingFS struct {
	vfs.FS
	mu    sync.Mutex
	on    bool
	stats map[string]*opStat
}

func (t *timingFS) enable(on bool) { t.mu.Lock(); t.on = on; t.mu.Unlock() }
func (t *timingFS) reset()         { t.mu.Lock(); t.stats = map[string]*opStat{}; t.mu.Unlock() }

func (t *timingFS) record(op, name string, start time.Time) {
	d := time.Since(start)
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.on {
		return
	}
	k := op + " " + fileKind(name)
	s := t.stats[k]
	if s == nil {
		s = &opStat{}
		t.stats[k] = s
	}
	s.n++
	s.d += d
}

// fileKind names what a path is in a Lance table or in mvd's state.
func fileKind(name string) string {
	base := filepath.Base(name)
	switch {
	case strings.Contains(name, "/_versions"):
		if base == "_versions" {
			return "_versions/"
		}
		return "manifest"
	case strings.Contains(name, "/_transactions"):
		if base == "_transactions" {
			return "_transactions/"
		}
		return "transaction"
	case strings.Contains(name, "/_deletions"):
		return "deletion"
	case strings.Contains(name, "/data"):
		if base == "data" {
			return "data/"
		}
		return "data file"
	case strings.Contains(name, ".mvd") || strings.Contains(name, "provenance") || strings.Contains(name, "_mvd"):
		return "mvd state " + base
	case strings.HasSuffix(name, ".lance"):
		return "table dir"
	}
	return base
}

func (t *timingFS) Open(name string) (vfs.File, error) {
	defer t.record("open", name, time.Now())
	f, err := t.FS.Open(name)
	if err != nil {
		return nil, err
	}
	return &timingFile{File: f, t: t, name: name}, nil
}

func (t *timingFS) Create(name string) (vfs.WritableFile, error) {
	defer t.record("create", name, time.Now())
	f, err := t.FS.Create(name)
	if err != nil {
		return nil, err
	}
	return &timingWritable{WritableFile: f, t: t, name: name}, nil
}

func (t *timingFS) Link(o, n string) error {
	defer t.record("link", n, time.Now())
	return t.FS.Link(o, n)
}

func (t *timingFS) Rename(o, n string) error {
	defer t.record("rename", n, time.Now())
	return t.FS.Rename(o, n)
}

func (t *timingFS) Remove(name string) error {
	defer t.record("remove", name, time.Now())
	return t.FS.Remove(name)
}

func (t *timingFS) MkdirAll(dir string) error {
	defer t.record("mkdir", dir, time.Now())
	return t.FS.MkdirAll(dir)
}

func (t *timingFS) ReadDir(dir string) ([]string, error) {
	defer t.record("readdir", dir, time.Now())
	return t.FS.ReadDir(dir)
}

func (t *timingFS) Stat(name string) (fs.FileInfo, error) {
	defer t.record("stat", name, time.Now())
	return t.FS.Stat(name)
}

func (t *timingFS) SyncDir(dir string) error {
	defer t.record("syncdir", dir, time.Now())
	return t.FS.SyncDir(dir)
}

type timingFile struct {
	vfs.File
	t    *timingFS
	name string
}

func (f *timingFile) ReadAt(p []byte, off int64) (int, error) {
	defer f.t.record("read", f.name, time.Now())
	return f.File.ReadAt(p, off)
}

type timingWritable struct {
	vfs.WritableFile
	t    *timingFS
	name string
}

func (f *timingWritable) Write(p []byte) (int, error) {
	defer f.t.record("write", f.name, time.Now())
	return f.WritableFile.Write(p)
}

func (f *timingWritable) Sync() error {
	defer f.t.record("sync", f.name, time.Now())
	return f.WritableFile.Sync()
}

// table formats the stats per refresh, most expensive first.
func (t *timingFS) table(n int) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	keys := make([]string, 0, len(t.stats))
	var total time.Duration
	for k, s := range t.stats {
		keys = append(keys, k)
		total += s.d
	}
	sort.Slice(keys, func(i, j int) bool { return t.stats[keys[i]].d > t.stats[keys[j]].d })
	var sb strings.Builder
	fmt.Fprintf(&sb, "  %-40s %8s %10s\n", "call on", "calls", "ms")
	for _, k := range keys {
		s := t.stats[k]
		fmt.Fprintf(&sb, "  %-40s %8.2f %10.3f\n", k, float64(s.n)/float64(n), float64(s.d.Microseconds())/1000/float64(n))
	}
	fmt.Fprintf(&sb, "  %-40s %8s %10.3f\n", "total in the filesystem", "", float64(total.Microseconds())/1000/float64(n))
	return sb.String()
}
