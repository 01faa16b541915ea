package datafile

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// benchFile returns the 1M-row benchmark data file, generating it with
// types_bench.mjs unless MVD_BENCH_DIR names an existing output directory.
func benchFile(b *testing.B) string {
	dir := os.Getenv("MVD_BENCH_DIR")
	if dir == "" {
		h := harnessDir(b)
		dir = b.TempDir()
		cmd := exec.Command("node", "types_bench.mjs", dir)
		cmd.Dir = h
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			b.Fatalf("types_bench.mjs: %v\n%s", err, stderr.String())
		}
	}
	files, err := filepath.Glob(filepath.Join(dir, "db", "bench.lance", "data", "*.lance"))
	if err != nil || len(files) != 1 {
		b.Fatalf("want one data file in %s, got %v (%v)", dir, files, err)
	}
	return files[0]
}

// BenchmarkReadColumns decodes every column of a 1M-row 2.2 file (int64,
// two strings, float64, timestamp, list<utf8>, 64-dim float vector) in
// batches of 64Ki rows.
func BenchmarkReadColumns(b *testing.B) {
	p := benchFile(b)
	f, err := os.Open(p)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	r, err := Open(f, st.Size(), p)
	if err != nil {
		b.Fatal(err)
	}
	fields := r.Schema().Flatten()
	ctx := context.Background()
	const batch = 1 << 16
	b.ResetTimer()
	for b.Loop() {
		for _, fl := range fields {
			if fl.ParentID >= 0 {
				continue
			}
			dt, err := fl.ArrowType()
			if err != nil {
				b.Fatal(err)
			}
			for start := uint64(0); start < r.NumRows(); start += batch {
				n := min(batch, r.NumRows()-start)
				a, err := r.ReadField(ctx, fl.ID, dt, start, n, memory.DefaultAllocator)
				if err != nil {
					b.Fatal(err)
				}
				a.Release()
			}
		}
	}
	sec := b.Elapsed().Seconds() / float64(b.N)
	b.ReportMetric(float64(r.NumRows())/sec, "rows/s")
	b.ReportMetric(float64(st.Size())/1e6/sec, "MB/s")
}

// BenchmarkTakeRows decodes 1,000 scattered rows of every column of the
// 1M-row file (take by row id).
func BenchmarkTakeRows(b *testing.B) {
	p := benchFile(b)
	f, err := os.Open(p)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	r, err := Open(f, st.Size(), p)
	if err != nil {
		b.Fatal(err)
	}
	rows := make([]uint64, 1000)
	for i := range rows {
		rows[i] = uint64(i) * (r.NumRows() / uint64(len(rows)))
	}
	fields := r.Schema().Flatten()
	ctx := context.Background()
	b.ResetTimer()
	for b.Loop() {
		for _, fl := range fields {
			if fl.ParentID >= 0 {
				continue
			}
			dt, err := fl.ArrowType()
			if err != nil {
				b.Fatal(err)
			}
			a, err := r.ReadFieldRows(ctx, fl.ID, dt, rows, memory.DefaultAllocator)
			if err != nil {
				b.Fatal(err)
			}
			a.Release()
		}
	}
	b.ReportMetric(float64(len(rows))/(b.Elapsed().Seconds()/float64(b.N)), "rows/s")
}
