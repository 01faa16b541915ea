package bench

import (
	"context"
	"io/fs"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/vfs"
)

// takeTableRows is the size of the bench_5m fixture.
const takeTableRows = 5_000_000

// BenchmarkTake takes 1, 1000 and 100000 random stable row ids from the
// 5M-row table (all columns), reporting the bytes and files read per take
// and LanceDB's takeRowIds of the same number of ids, measured in the same
// run (mvd-vs-lancedb > 1 means mvd is faster; both sides' best run, as in
// BenchmarkScan1M). The target is that cost grows with the ids taken, not
// the table: bytes-read/op against table-MB shows it (reads/op counts the
// ReadAt calls).
func BenchmarkTake(b *testing.B) {
	root := takeTable(b)
	tableBytes := dirSize(b, filepath.Join(root, "data"))
	for _, n := range []int{1, 1000, 100_000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) { benchTake(b, root, n, tableBytes) })
	}
}

func benchTake(b *testing.B, root string, n int, tableBytes int64) {
	ctx := context.Background()
	cfs := vfs.NewCountingFS(vfs.OS(), nil)
	tbl, err := lance.Open(context.Background(), cfs, root)
	if err != nil {
		b.Fatal(err)
	}
	m, err := tbl.Checkout(context.Background(), 0)
	if err != nil {
		b.Fatal(err)
	}
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	cfs.Reset()
	best := bestOf{}
	seed := uint32(12345) // the seeds bench_scan.mjs take draws from
	for b.Loop() {
		b.StopTimer()
		ids := randomIDs(takeTableRows, n, seed)
		seed++
		b.StartTimer()
		run := best.start()
		batches, missing, err := m.TakeAll(ctx, ids, lance.ScanOptions{Mem: mem})
		run.stop()
		b.StopTimer()
		if err != nil {
			b.Fatal(err)
		}
		if !missing.IsEmpty() {
			b.Fatalf("%d of %d ids missing", missing.GetCardinality(), n)
		}
		checkTaken(b, batches, ids)
		if mem.CurrentAlloc() != 0 {
			b.Fatalf("%d bytes still allocated after the take", mem.CurrentAlloc())
		}
		b.StartTimer()
	}
	b.StopTimer()

	ldb := lancedbRun(b, "take", root, strconv.Itoa(n), "3")
	if ldb.Rows != int64(n) {
		b.Fatalf("LanceDB took %d rows, want %d", ldb.Rows, n)
	}
	read := float64(cfs.BytesRead()) / float64(b.N)
	b.ReportMetric(best.wall.Seconds()*1e3, "best-ms")
	b.ReportMetric(best.cpu.Seconds()*1e3, "cpu-ms")
	b.ReportMetric(read, "bytes-read/op")
	b.ReportMetric(read/float64(n), "bytes-read/id")
	b.ReportMetric(float64(cfs.Reads())/float64(b.N), "reads/op")
	b.ReportMetric(float64(cfs.Opens())/float64(b.N), "files-opened/op")
	b.ReportMetric(float64(tableBytes)/1e6, "table-MB")
	b.ReportMetric(ldb.MS, "lancedb-ms")
	b.ReportMetric(ldb.CPUMS, "lancedb-cpu-ms")
	b.ReportMetric(ldb.MS/1e3/best.wall.Seconds(), "mvd-vs-lancedb")
	b.ReportMetric(ldb.CPUMS/1e3/best.cpu.Seconds(), "mvd-vs-lancedb-cpu")
}

// randomIDs draws n distinct ids in [0, total) exactly as bench_scan.mjs
// randomIds does (32-bit LCG, id = s·total >> 32), so both sides take the
// same rows.
func randomIDs(total uint64, n int, seed uint32) *roaring64.Bitmap {
	ids := roaring64.New()
	s := seed
	for ids.GetCardinality() < uint64(n) {
		s = s*1664525 + 1013904223
		ids.Add(uint64(s) * total >> 32)
	}
	return ids
}

// checkTaken fails unless the batches hold exactly the rows with the ids
// (in bench_5m the id column equals the stable row id), then releases them.
func checkTaken(b *testing.B, batches []arrow.RecordBatch, ids *roaring64.Bitmap) {
	got := roaring64.New()
	var rows int64
	for _, rec := range batches {
		col := rec.Column(0).(*array.Int64)
		for i := 0; i < col.Len(); i++ {
			got.Add(uint64(col.Value(i)))
		}
		rows += rec.NumRows()
		rec.Release()
	}
	if rows != int64(ids.GetCardinality()) || !got.Equals(ids) {
		b.Fatalf("took %d rows (%d distinct ids), want the %d ids asked for", rows, got.GetCardinality(), ids.GetCardinality())
	}
}

// dirSize returns the bytes of the files under dir.
func dirSize(b *testing.B, dir string) int64 {
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err == nil {
			n += info.Size()
		}
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	return n
}
