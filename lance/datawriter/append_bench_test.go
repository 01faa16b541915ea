package datawriter

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/mvd-project/mvd/lance/internal/format"
	"github.com/mvd-project/mvd/vfs"
)

// BenchmarkAppendFragment is the view side of issue 10's 100k-row append:
// one fragment written through a FragmentWriter from 8192-row slices of
// decoded columns (as a refresh hands them over), without fsync, so it
// measures encoding and writing. all = V2 (id, kind, amount, provenance;
// 100k rows), filtered = V1's shape (id, user, amount_cents, provenance;
// the 11% of the rows that pass its filter).
//
//	go test -run '^$' -bench AppendFragment -benchmem ./lance/datawriter/
func BenchmarkAppendFragment(b *testing.B) {
	for _, c := range []struct {
		name string
		rows int
		str  string // the string column's name and values
	}{
		{"all", 100_000, "kind"},
		{"filtered", 11_000, "user"},
	} {
		b.Run(c.name, func(b *testing.B) {
			recs, schema := appendBatches(b, c.rows, c.str)
			defer func() {
				for _, r := range recs {
					r.Release()
				}
			}()
			fsys := vfs.Unsynced(vfs.OS())
			root := b.TempDir()
			b.ReportAllocs()
			b.ResetTimer()
			cpu0 := cpuTime()
			var size uint64
			for range b.N {
				w := NewFragmentWriter(fsys, root, schema, format.V2_2) // what views get (LanceDB 0.39's default)
				for _, r := range recs {
					if err := w.Write(r); err != nil {
						b.Fatal(err)
					}
				}
				frags, err := w.Finish()
				if err != nil || len(frags) != 1 {
					b.Fatalf("%v %v", frags, err)
				}
				b.StopTimer()
				size = frags[0].Files[0].SizeBytes
				removeFragments(fsys, root, frags)
				b.StartTimer()
			}
			// CPU time (user + system, every goroutine) is steadier than
			// wall time on a shared machine.
			b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/1000/float64(b.N), "cpu-ms/op")
			b.ReportMetric(float64(size), "file-bytes")
		})
	}
}

// cpuTime is the process's user + system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// appendBatches returns rows rows of (id int64, str utf8, amount float64,
// __source_row_id uint64) as 8192-row slices of one array per column.
func appendBatches(tb testing.TB, rows int, str string) ([]arrow.RecordBatch, *format.Schema) {
	tb.Helper()
	mem := memory.DefaultAllocator
	as := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: str, Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "amount", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "__source_row_id", Type: arrow.PrimitiveTypes.Uint64},
	}, nil)
	schema, err := format.NewSchemaFromArrow(as)
	if err != nil {
		tb.Fatal(err)
	}
	kinds := []string{"view", "click", "purchase", "refund", "signup", "login", "logout", "share"}
	ib := array.NewInt64Builder(mem)
	sb := array.NewStringBuilder(mem)
	fb := array.NewFloat64Builder(mem)
	ub := array.NewUint64Builder(mem)
	for i := range rows {
		h := uint32(i) * 2654435761
		ib.Append(int64(1_000_000 + i*9))
		if str == "kind" {
			sb.Append(kinds[h>>29])
		} else {
			sb.Append(fmt.Sprintf("u%d", h%100000))
		}
		fb.Append(float64(h%10000) / 100)
		ub.Append(uint64(1_000_000 + i*9))
	}
	cols := []arrow.Array{ib.NewArray(), sb.NewArray(), fb.NewArray(), ub.NewArray()}
	whole := array.NewRecordBatch(as, cols, int64(rows))
	for _, c := range cols {
		c.Release()
	}
	defer whole.Release()
	var recs []arrow.RecordBatch
	for lo := 0; lo < rows; lo += 8192 {
		recs = append(recs, whole.NewSlice(int64(lo), int64(min(rows, lo+8192))))
	}
	return recs, schema
}
