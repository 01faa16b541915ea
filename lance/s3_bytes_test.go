package lance_test

import (
	"context"
	"errors"
	"io"
	"path"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/lance/datawriter"
	"github.com/mvd-project/mvd/vfs"
	"github.com/mvd-project/mvd/vfs/s3fs/s3fstest"
)

// readTable runs op (a scan or a take) on the latest version of the table
// at root on fsys and returns the rows it read.
func readTable(t *testing.T, fsys vfs.FS, root string, op func(*lance.Snapshot) (interface {
	Next(context.Context) (arrow.RecordBatch, error)
	Close() error
}, error)) int64 {
	t.Helper()
	ctx := context.Background()
	tbl, err := lance.Open(ctx, fsys, root)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := tbl.Latest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r, err := op(snap)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var rows int64
	for {
		rec, err := r.Next(ctx)
		if errors.Is(err, io.EOF) {
			return rows
		}
		if err != nil {
			t.Fatal(err)
		}
		rows += rec.NumRows()
		rec.Release()
	}
}

// dataCounting counts the bytes read from data files (…/data/…).
type dataCounting struct {
	vfs.FS
	n atomic.Int64
}

func (d *dataCounting) Open(name string) (vfs.File, error) {
	f, err := d.FS.Open(name)
	if err != nil || !strings.Contains(name, "/data/") {
		return f, err
	}
	return &dataFile{File: f, n: &d.n}, nil
}

type dataFile struct {
	vfs.File
	n *atomic.Int64
}

func (f *dataFile) ReadAt(p []byte, off int64) (int, error) {
	n, err := f.File.ReadAt(p, off)
	f.n.Add(int64(n))
	return n, err
}

// dataBytes is the size of the table's data files.
func dataBytes(t *testing.T, fsys vfs.FS, root string) int64 {
	t.Helper()
	names, err := fsys.ReadDir(path.Join(root, "data"))
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, name := range names {
		st, err := fsys.Stat(path.Join(root, "data", name))
		if err != nil {
			t.Fatal(err)
		}
		n += st.Size()
	}
	return n
}

// byteRange parses "bytes=A-B".
func byteRange(t *testing.T, h string) (int64, int64) {
	t.Helper()
	a, b, ok := strings.Cut(strings.TrimPrefix(h, "bytes="), "-")
	lo, err1 := strconv.ParseInt(a, 10, 64)
	hi, err2 := strconv.ParseInt(b, 10, 64)
	if !ok || err1 != nil || err2 != nil {
		t.Fatalf("GET without a closed range: %q", h)
	}
	return lo, hi + 1
}

// TestReadsOnS3ReadEachByteOnce: a scan and a take of a table on S3 fetch
// the bytes they need with ranged GETs only (no HEAD: the manifest records
// each data file's size), none twice (no two GETs of an
// object overlap: a data file's footer was fetched three times, as the
// legacy footer, the 2.x footer and with the metadata), and exactly as
// many bytes of data files as the same read of the same table on local
// disk.
func TestReadsOnS3ReadEachByteOnce(t *testing.T) {
	srv := s3fstest.Start(t, "b")
	remote := srv.FS(t, "b")
	local := &dataCounting{FS: vfs.OS()}
	dir := t.TempDir()
	schema, err := lance.NewSchemaFromArrow(baseSchema)
	if err != nil {
		t.Fatal(err)
	}
	const root = "db/t.lance"
	for _, fsys := range []vfs.FS{remote, local} {
		r := root
		if fsys == local {
			r = path.Join(dir, root)
		}
		var frags []lance.NewFragment
		for i := range int64(3) {
			fr, err := datawriter.WriteFragments(fsys, r, schema, lance.DefaultFileVersion, []arrow.RecordBatch{baseRecord(idRange(i*20000, (i+1)*20000))})
			if err != nil {
				t.Fatal(err)
			}
			frags = append(frags, fr...)
		}
		if _, _, err := lance.Create(context.Background(), fsys, r, lance.CreateOptions{Schema: schema, Fragments: frags}); err != nil {
			t.Fatal(err)
		}
	}
	scan := func(s *lance.Snapshot) (interface {
		Next(context.Context) (arrow.RecordBatch, error)
		Close() error
	}, error) {
		return s.Scan(context.Background(), lance.ScanOptions{Columns: []string{"id", "name"}})
	}
	take := func(s *lance.Snapshot) (interface {
		Next(context.Context) (arrow.RecordBatch, error)
		Close() error
	}, error) {
		return s.ReadRows(context.Background(), roaring64.BitmapOf(5, 20007, 20008, 59999), lance.ScanOptions{})
	}
	for _, c := range []struct {
		name string
		op   func(*lance.Snapshot) (interface {
			Next(context.Context) (arrow.RecordBatch, error)
			Close() error
		}, error)
		rows int64
	}{{"scan", scan, 60000}, {"take", take, 4}} {
		local.n.Store(0)
		if n := readTable(t, local, path.Join(dir, root), c.op); n != c.rows {
			t.Fatalf("%s on disk: %d rows, want %d", c.name, n, c.rows)
		}
		onDisk := local.n.Load()
		srv.Reset()
		if n := readTable(t, remote, root, c.op); n != c.rows {
			t.Fatalf("%s on S3: %d rows, want %d", c.name, n, c.rows)
		}
		var fetched, gets int64
		seen := map[string][][2]int64{}
		for _, r := range srv.Requests() {
			if r.Kind() == "HEAD" && strings.Contains(r.Key, "/data/") {
				t.Errorf("%s: HEAD of a data file whose size the manifest records: %s", c.name, r.Key)
			}
			if r.Kind() != "GET" || !strings.Contains(r.Key, "/data/") {
				continue
			}
			lo, hi := byteRange(t, r.Range)
			for _, o := range seen[r.Key] {
				if lo < o[1] && o[0] < hi {
					t.Errorf("%s: %s bytes [%d,%d) fetched again by a GET of [%d,%d)", c.name, r.Key, o[0], o[1], lo, hi)
				}
			}
			seen[r.Key] = append(seen[r.Key], [2]int64{lo, hi})
			fetched += r.BytesOut
			gets++
		}
		if fetched != onDisk {
			t.Errorf("%s: %d bytes of data files fetched from S3, %d read on disk; want the same", c.name, fetched, onDisk)
		}
		all := requestsTo(srv, "")
		size := dataBytes(t, remote, root)
		t.Logf("%s: %d GETs of data files, %d bytes fetched on S3 (%.3f of the data files' %d), %d read on disk; all requests %v",
			c.name, gets, fetched, float64(fetched)/float64(size), size, onDisk, all)
	}
}

// TestSmallDataFileOnS3IsOneGET: the data file of a small append (a few
// KiB) is fetched whole by one GET when a read opens it, not as a footer,
// metadata and page GETs (six requests before); a large file is still
// read by ranges.
func TestSmallDataFileOnS3IsOneGET(t *testing.T) {
	ctx := context.Background()
	srv := s3fstest.Start(t, "b")
	fsys := srv.FS(t, "b")
	const root = "db/t.lance"
	schema, err := lance.NewSchemaFromArrow(baseSchema)
	if err != nil {
		t.Fatal(err)
	}
	big, err := datawriter.WriteFragments(fsys, root, schema, lance.DefaultFileVersion, []arrow.RecordBatch{baseRecord(idRange(0, 20000))})
	if err != nil {
		t.Fatal(err)
	}
	tbl, _, err := lance.Create(ctx, fsys, root, lance.CreateOptions{Schema: schema, Fragments: big})
	if err != nil {
		t.Fatal(err)
	}
	appendVersions(t, fsys, tbl, 1) // row ids 20000..20002 in a fragment of its own
	var rows int64
	srv.Reset()
	rows = readTable(t, fsys, root, func(s *lance.Snapshot) (interface {
		Next(context.Context) (arrow.RecordBatch, error)
		Close() error
	}, error) {
		return s.ReadRows(ctx, roaring64.BitmapOf(5, 20000, 20002), lance.ScanOptions{Columns: []string{"id", "name"}})
	})
	if rows != 3 {
		t.Fatalf("read %d rows, want 3", rows)
	}
	perFile := map[string]int{}
	for _, r := range srv.Requests() {
		if strings.Contains(r.Key, "/data/") {
			perFile[r.Key]++
			if r.Kind() != "GET" {
				t.Errorf("%s of a data file: %s", r.Kind(), r.Key)
			}
		}
	}
	small := path.Join(root, "data", "")
	var smallGETs, bigGETs int
	for k, n := range perFile {
		if strings.Contains(k, big[0].Files[0].Path) {
			bigGETs = n
		} else if strings.HasPrefix(k, small) {
			smallGETs = n
		}
	}
	if smallGETs != 1 || bigGETs < 3 {
		t.Fatalf("GETs: %d of the small append's file, %d of the 20,000-row file; want 1 and ranged reads (%v)", smallGETs, bigGETs, perFile)
	}
}
