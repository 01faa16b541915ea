package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/lance/datafile"
	"github.com/mvd-project/mvd/lance/datawriter"
	"github.com/mvd-project/mvd/vfs"
)

// BenchmarkWrite writes the rows of each benchmark table (read into
// memory first) as a new table, with mvd's writer (FragmentWriter and
// lance.Create, as a view's rebuild writes) and with LanceDB's createTable
// in the same run, and reports both speeds and the bytes of the data files
// each wrote. Targets (issue 22): bytes-vs-lancedb ≤ 1.1,
// speed-vs-lancedb ≥ 1. With -v the bytes per column and the encodings
// each writer chose are logged.
//
//   - scan: the scan table, 1M rows of every type mvd's views hold
//     (MVD_BENCH_WRITE_ROWS=N writes N rows instead, for quick runs).
//   - take5M: the bench_5m fixture (id, name, val; 5M rows).
func BenchmarkWrite(b *testing.B) {
	b.Run("scan", func(b *testing.B) { benchWrite(b, writeSource(b)) })
	b.Run("take5M", func(b *testing.B) { benchWrite(b, takeTable(b)) })
}

// benchWrite is one table of BenchmarkWrite.
func benchWrite(b *testing.B, src string) {
	ctx := context.Background()
	recs, snap := readAll(b, src)
	defer releaseAll(recs)
	var arrowMB float64
	var rows int64
	for _, r := range recs {
		arrowMB += float64(arrowBytes(r)) / 1e6
		rows += r.NumRows()
	}
	out := b.TempDir()
	best := bestOf{}
	var last string
	run := 0
	for b.Loop() {
		b.StopTimer()
		if last != "" {
			_ = os.RemoveAll(last)
		}
		last = filepath.Join(out, fmt.Sprintf("mvd%d.lance", run))
		run++
		b.StartTimer()
		t := best.start()
		writeTable(b, ctx, last, snap, recs)
		t.stop()
	}
	b.StopTimer()
	mvdBytes := dataBytesOnDisk(b, last)
	repeats := 3
	if rows > 2_000_000 {
		repeats = 1 // each LanceDB run of the 5M table takes seconds
	}
	lb := lancedbRun(b, "write", src, filepath.Join(out, "lancedb"), strconv.Itoa(repeats))
	if lb.Rows != rows {
		b.Fatalf("LanceDB wrote %d rows, want %d", lb.Rows, rows)
	}
	if testing.Verbose() {
		logColumns(b, last, lb.Table)
	}
	ms := float64(best.wall.Microseconds()) / 1e3
	cpuMS := float64(best.cpu.Microseconds()) / 1e3
	b.ReportMetric(ms, "best-ms")
	b.ReportMetric(cpuMS, "cpu-ms")
	b.ReportMetric(float64(rows)/(ms/1e3), "rows/s")
	b.ReportMetric(arrowMB/(ms/1e3), "MB/s")
	b.ReportMetric(float64(mvdBytes)/1e6, "disk-MB")
	b.ReportMetric(lb.MS, "lancedb-ms")
	b.ReportMetric(lb.CPUMS, "lancedb-cpu-ms")
	b.ReportMetric(float64(lb.Bytes)/1e6, "lancedb-disk-MB")
	b.ReportMetric(float64(mvdBytes)/float64(lb.Bytes), "bytes-vs-lancedb")
	b.ReportMetric(lb.MS/ms, "speed-vs-lancedb")
	b.ReportMetric(lb.CPUMS/cpuMS, "speed-vs-lancedb-cpu")
}

// writeSource is the scan benchmark table, or with MVD_BENCH_WRITE_ROWS
// set a table of that many rows from the same generator (quicker runs).
func writeSource(tb testing.TB) string {
	n, _ := strconv.Atoi(os.Getenv("MVD_BENCH_WRITE_ROWS"))
	if n <= 0 {
		return scanTable(tb)
	}
	dir := filepath.Join(workDir, "write-src")
	makeScanTable(tb, dir, n)
	return filepath.Join(dir, "bench_scan.lance")
}

// readAll reads every row of the table at root into memory.
func readAll(tb testing.TB, root string) ([]arrow.RecordBatch, *lance.Snapshot) {
	tb.Helper()
	ctx := context.Background()
	tbl, err := lance.Open(ctx, vfs.OS(), root)
	if err != nil {
		tb.Fatal(err)
	}
	snap, err := tbl.Checkout(ctx, 0)
	if err != nil {
		tb.Fatal(err)
	}
	s, err := snap.Scan(ctx, lance.ScanOptions{BatchSize: 65536})
	if err != nil {
		tb.Fatal(err)
	}
	defer s.Close()
	var recs []arrow.RecordBatch
	for {
		rec, err := s.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			tb.Fatal(err)
		}
		recs = append(recs, rec)
	}
	return recs, snap
}

func releaseAll(recs []arrow.RecordBatch) {
	for _, r := range recs {
		r.Release()
	}
}

// writeTable writes recs as a new table at root with src's schema and
// data file version, as a view's rebuild does.
func writeTable(tb testing.TB, ctx context.Context, root string, src *lance.Snapshot, recs []arrow.RecordBatch) {
	tb.Helper()
	fw := datawriter.NewFragmentWriter(vfs.OS(), root, src.Schema, src.DataFileVersion)
	pending := vfs.NewSyncBatch(vfs.OS())
	fw.DeferSync(pending)
	for _, r := range recs {
		if err := fw.Write(r); err != nil {
			tb.Fatal(err)
		}
	}
	frags, err := fw.Finish()
	if err != nil {
		tb.Fatal(err)
	}
	if _, _, err := lance.Create(ctx, vfs.OS(), root, lance.CreateOptions{
		Schema: src.Schema, Fragments: frags, DataFileVersion: src.DataFileVersion, Pending: pending,
	}); err != nil {
		tb.Fatal(err)
	}
}

// dataBytesOnDisk is the size of the data files under root/data.
func dataBytesOnDisk(tb testing.TB, root string) int64 {
	tb.Helper()
	ents, err := os.ReadDir(filepath.Join(root, "data"))
	if err != nil {
		tb.Fatal(err)
	}
	var n int64
	for _, e := range ents {
		fi, err := e.Info()
		if err != nil {
			tb.Fatal(err)
		}
		n += fi.Size()
	}
	return n
}

// columnBytes sums, per column of the data files under root/data, the
// bytes of its pages by encoding.
func columnBytes(tb testing.TB, root string) (map[string]map[string]uint64, []string) {
	tb.Helper()
	ents, err := os.ReadDir(filepath.Join(root, "data"))
	if err != nil {
		tb.Fatal(err)
	}
	out := map[string]map[string]uint64{}
	var order []string
	for _, e := range ents {
		f, err := os.Open(filepath.Join(root, "data", e.Name()))
		if err != nil {
			tb.Fatal(err)
		}
		fi, _ := f.Stat()
		r, err := datafile.Open(f, fi.Size(), e.Name())
		if err != nil {
			f.Close()
			tb.Fatal(err)
		}
		pages, err := r.Pages()
		f.Close()
		if err != nil {
			tb.Fatal(err)
		}
		names := map[int32]string{}
		for _, fl := range r.Schema().Fields {
			var walk func(path string, x *lance.Field)
			walk = func(path string, x *lance.Field) {
				names[x.ID] = path
				for _, c := range x.Children {
					walk(path+"."+c.Name, c)
				}
			}
			walk(fl.Name, fl)
		}
		for _, p := range pages {
			name := names[p.Field]
			if out[name] == nil {
				out[name] = map[string]uint64{}
				order = append(order, name)
			}
			out[name][p.Encoding] += p.Bytes
		}
	}
	return out, order
}

// logColumns logs the bytes per column of two tables' data files and the
// encodings each chose.
func logColumns(tb testing.TB, mvd, lancedb string) {
	tb.Helper()
	a, order := columnBytes(tb, mvd)
	l, _ := columnBytes(tb, lancedb)
	sum := func(m map[string]uint64) (n uint64) {
		for _, v := range m {
			n += v
		}
		return n
	}
	encs := func(m map[string]uint64) string {
		var ks []string
		for k, v := range m {
			ks = append(ks, fmt.Sprintf("%d×%s", v, k))
		}
		sort.Strings(ks)
		return strings.Join(ks, "; ")
	}
	for _, c := range order {
		tb.Logf("%-12s mvd %10d  lancedb %10d  ratio %.2f\n    mvd: %s\n    lancedb: %s",
			c, sum(a[c]), sum(l[c]), float64(sum(a[c]))/float64(max(1, sum(l[c]))), encs(a[c]), encs(l[c]))
	}
}
