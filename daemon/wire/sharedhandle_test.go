package wire

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"path"
	"strings"
	"sync"
	"testing"

	"github.com/mvd-project/mvd/daemon"
	"github.com/mvd-project/mvd/internal/lancedbtest"
	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/matview"
	"github.com/mvd-project/mvd/vfs"
	"github.com/mvd-project/mvd/vfs/s3fs/s3fstest"
)

// readsFS counts, per file, the opens through which something was read
// (an open to see whether a file exists reads nothing).
type readsFS struct {
	vfs.FS
	mu    sync.Mutex
	reads map[string]int
}

func (c *readsFS) Open(name string) (vfs.File, error) {
	f, err := c.FS.Open(name)
	if err != nil {
		return nil, err
	}
	return &readsFile{File: f, name: name, c: c}, nil
}

func (c *readsFS) count(name string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.reads[name]
}

type readsFile struct {
	vfs.File
	name string
	c    *readsFS
	once sync.Once
}

func (f *readsFile) ReadAt(p []byte, off int64) (int, error) {
	f.once.Do(func() {
		f.c.mu.Lock()
		f.c.reads[f.name]++
		f.c.mu.Unlock()
	})
	return f.File.ReadAt(p, off)
}

// TestServeReadsSourceManifestOnce: under serve, with two views over a
// LanceDB source, one LanceDB commit's manifest is read once, by the
// watcher, and both views' refreshes use what it decoded (issue 22: a
// source of one-row commits holds a fragment per commit, so each read and
// decode of its manifest costs as much as the commit count).
func TestServeReadsSourceManifestOnce(t *testing.T) {
	lancedbtest.Require(t)
	ctx := context.Background()
	cfg := testConfig(t)
	d := lancedbtest.StartDriver(t, cfg.DB)
	if _, err := d.CreateTable("src", lancedbtest.SourceSchema(), lancedbtest.SourceRows(0, 40, 0)); err != nil {
		t.Fatal(err)
	}
	db, err := matview.Open(cfg.DB)
	if err != nil {
		t.Fatal(err)
	}
	for name, def := range map[string]matview.Definition{"big": {Where: "amount >= 50"}, "all": {}} {
		if _, err := db.CreateView(ctx, name, "src", def); err != nil {
			t.Fatal(err)
		}
	}
	watermarks := func(v uint64) (bool, error) {
		for _, name := range []string{"big", "all"} {
			view, err := db.OpenView(ctx, name)
			if err != nil {
				return false, err
			}
			info, err := view.Info(ctx)
			if err != nil || info.Watermark.SourceVersion != v {
				return false, err
			}
		}
		return true, nil
	}

	counted := &readsFS{FS: vfs.OS(), reads: map[string]int{}}
	deps, err := depsOn(cfg, quietLog, counted)
	if err != nil {
		t.Fatal(err)
	}
	deps.Bus = nil
	t.Cleanup(func() {
		if err := db.Close(); err != nil {
			t.Error(err)
		}
	})
	serveReady(t, cfg, deps)

	root := path.Join(cfg.DB, "src"+lance.TableSuffix)
	for i := range 3 {
		v, err := d.Add("src", lancedbtest.SourceRows(int64(1000+i), int64(1001+i), 0))
		if err != nil {
			t.Fatal(err)
		}
		waitUntil(t, "both views at the source's new version", func() (bool, error) { return watermarks(v) })
		src, err := lance.Open(ctx, vfs.OS(), root)
		if err != nil {
			t.Fatal(err)
		}
		m, err := src.Checkout(ctx, v)
		if err != nil {
			t.Fatal(err)
		}
		if n := counted.count(path.Join(root, "_versions", m.File)); n != 1 {
			t.Errorf("source version %d's manifest %s was read %d times by the daemon; want once (the watcher's read, shared with both views' refreshes)", v, m.File, n)
		}
	}
}

// TestSharedTablesMapsRoots: the watcher's OpenTable hands out the
// database's shared handle for each table root the watcher spells under
// its directory, on a local database and on s3:// ones (in a prefix and
// at a bucket's root, where the watcher's directory is "/" and the
// database's roots have no leading slash); a root elsewhere gets a handle
// of its own, and a missing table lance's not-a-table error.
func TestSharedTablesMapsRoots(t *testing.T) {
	ctx := context.Background()
	srv := s3fstest.Start(t, "bkt")
	store := srv.FS(t, "bkt")
	var so []string
	for k, v := range srv.StorageOptions() {
		so = append(so, "--storage-option", k+"="+v)
	}
	schema, err := lance.NewSchemaFromArrow(idSchema)
	if err != nil {
		t.Fatal(err)
	}
	for i, db := range []string{"", "s3://bkt", "s3://bkt/shop"} {
		t.Run(cmp.Or(db, "local"), func(t *testing.T) {
			var cfg daemon.Config
			var tables vfs.FS = vfs.OS()
			if db == "" {
				cfg = testConfig(t)
			} else {
				cfg, tables = testConfig(t, append([]string{"--db", db}, so...)...), store
			}
			wfs, dir, err := watchStore(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if wfs == nil {
				wfs, dir = tables, cfg.DB
			}
			prefix := strings.TrimPrefix(strings.TrimPrefix(cfg.DB, "s3://bkt"), "/")
			if db == "" {
				prefix = cfg.DB
			}
			other := path.Join(t.TempDir(), "other"+lance.TableSuffix)
			if db != "" {
				other = fmt.Sprintf("elsewhere%d/other%s", i, lance.TableSuffix)
			}
			for _, root := range []string{path.Join(prefix, "src"+lance.TableSuffix), other} {
				if _, _, err := lance.Create(ctx, tables, root, lance.CreateOptions{Schema: schema}); err != nil {
					t.Fatal(err)
				}
			}
			mdb, err := matview.OpenWith(cfg.DB, matview.Options{StorageOptions: cfg.StorageOptions.Map()})
			if err != nil {
				t.Fatal(err)
			}
			defer mdb.Close()
			open := sharedTables(mdb, wfs, dir)
			want, err := mdb.TableHandle(ctx, "src")
			if err != nil {
				t.Fatal(err)
			}
			if got, err := open(ctx, path.Join(dir, "src"+lance.TableSuffix)); err != nil || got != want {
				t.Errorf("open %s: %p, %v; want the database's handle %p", path.Join(dir, "src"+lance.TableSuffix), got, err, want)
			}
			if got, err := open(ctx, other); err != nil || got == want || got.Root() != other {
				t.Errorf("open %s: %v, %v; want a handle of its own", other, got, err)
			}
			if _, err := open(ctx, path.Join(dir, "nope"+lance.TableSuffix)); !errors.Is(err, lance.ErrNotATable) {
				t.Errorf("open a missing table: %v; want lance.ErrNotATable", err)
			}
		})
	}
}
