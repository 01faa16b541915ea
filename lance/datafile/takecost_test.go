package datafile

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// readLog is an io.ReaderAt that records the byte ranges read from it.
type readLog struct {
	r     io.ReaderAt
	mu    sync.Mutex
	spans []span
}

func (l *readLog) ReadAt(p []byte, off int64) (int, error) {
	l.mu.Lock()
	l.spans = append(l.spans, span{uint64(off), uint64(len(p))})
	l.mu.Unlock()
	return l.r.ReadAt(p, off)
}

// take returns the ranges read since the last call.
func (l *readLog) take() []span {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.spans
	l.spans = nil
	return out
}

// overlap reports a byte read twice, if any.
func overlap(spans []span) error {
	s := append([]span(nil), spans...)
	sort.Slice(s, func(i, j int) bool { return s[i].pos < s[j].pos })
	for i := 1; i < len(s); i++ {
		if s[i].pos < s[i-1].pos+s[i-1].size {
			return fmt.Errorf("bytes %d+%d and %d+%d overlap", s[i-1].pos, s[i-1].size, s[i].pos, s[i].size)
		}
	}
	return nil
}

// takeCostTables writes LanceDB's 3000-row 2.1 and 2.2 type tables and
// opens their data files through read logs.
func takeCostTables(t *testing.T) map[string]*takeCostFile {
	out := generate(t, "2.1,2.2", "3000")
	files := map[string]*takeCostFile{}
	for _, v := range []string{"2.1", "2.2"} {
		table := filepath.Join(out, "db", "t_"+v+"_3000.lance")
		m := latestManifest(t, table)
		schema, err := arrowSchemaOf(m.GetFields(), m.GetSchemaMetadata())
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(table, "data", m.GetFragments()[0].GetFiles()[0].GetPath())
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		st, err := f.Stat()
		if err != nil {
			t.Fatal(err)
		}
		log := &readLog{r: f}
		r, err := Open(log, st.Size(), p)
		if err != nil {
			t.Fatal(err)
		}
		log.take()
		tf := &takeCostFile{r: r, log: log}
		for _, fl := range m.GetFields() {
			if fl.GetParentId() < 0 {
				fld, ok := schema.FieldsByName(fl.GetName())
				if !ok {
					t.Fatalf("no Arrow field %s", fl.GetName())
				}
				tf.fields = append(tf.fields, takeCostField{fl.GetId(), fl.GetName(), fld[0].Type})
			}
		}
		files[v] = tf
	}
	return files
}

type takeCostFile struct {
	r      *Reader
	log    *readLog
	fields []takeCostField
}

type takeCostField struct {
	id   int32
	name string
	dt   arrow.DataType
}

// TestTakeReadsEachByteOnce takes every row of every field of LanceDB
// files (all pages, every layout and encoding types.mjs writes), every row
// twice, and every 150th row, and checks that no take read a byte of the
// file twice (chunk metadata, dictionaries and shared chunks included).
func TestTakeReadsEachByteOnce(t *testing.T) {
	ctx := context.Background()
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	for v, tf := range takeCostTables(t) {
		n := tf.r.NumRows()
		all := make([]uint64, n)
		var repeats, sparse []uint64
		for i := range all {
			all[i] = uint64(i)
			repeats = append(repeats, uint64(i), uint64(i))
			// Rows far apart but sharing chunks and pages.
			if i%150 == 0 {
				sparse = append(sparse, uint64(i))
			}
		}
		for _, f := range tf.fields {
			for name, rows := range map[string][]uint64{"all": all, "repeats": repeats, "sparse": sparse} {
				a, err := tf.r.ReadFieldRows(ctx, f.id, f.dt, rows, mem)
				if err != nil {
					t.Fatalf("%s %s take %s: %v", v, f.name, name, err)
				}
				if a.Len() != len(rows) {
					t.Errorf("%s %s take %s returned %d rows, want %d", v, f.name, name, a.Len(), len(rows))
				}
				a.Release()
				// Constant pages hold their value inline and read nothing.
				spans := tf.log.take()
				if err := overlap(spans); err != nil {
					t.Errorf("%s %s take %s read a byte twice: %v", v, f.name, name, err)
				}
			}
		}
	}
}

// TestSingleRowTakeReadsOneChunk takes one row from the middle of each
// multi-chunk flat mini-block page of LanceDB files and checks that the
// take read the page's chunk metadata, the one chunk holding the row and
// the dictionary (if any), and nothing else.
func TestSingleRowTakeReadsOneChunk(t *testing.T) {
	ctx := context.Background()
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	checked, dicts := 0, 0
	for v, tf := range takeCostTables(t) {
		for _, f := range tf.fields {
			leaves := tf.r.tree.byID[f.id].leaves()
			if len(leaves) != 1 {
				continue
			}
			c := leaves[0].column
			starts, err := tf.r.pageStarts(c)
			if err != nil {
				t.Fatal(err)
			}
			for p := range tf.r.cols[c].Pages {
				layout, src, err := tf.r.pageLayout(c, p)
				if err != nil {
					t.Fatal(err)
				}
				l := layout.GetMiniBlockLayout()
				if l == nil || l.RepCompression != nil {
					continue
				}
				chunks, _, err := parseChunks(l, src)
				if err != nil {
					t.Fatal(err)
				}
				tf.log.take()
				if len(chunks) < 3 {
					continue
				}
				ch := chunks[len(chunks)/2]
				row := starts[p] + ch.first + ch.count/2
				a, err := tf.r.ReadFieldRows(ctx, f.id, f.dt, []uint64{row}, mem)
				if err != nil {
					t.Fatalf("%s %s take row %d: %v", v, f.name, row, err)
				}
				a.Release()
				want := []span{src.spans[0], {src.spans[1].pos + ch.off, ch.size}}
				if l.Dictionary != nil {
					want = append(want, src.spans[2])
					dicts++
				}
				got := tf.log.take()
				sort.Slice(got, func(i, j int) bool { return got[i].pos < got[j].pos })
				sort.Slice(want, func(i, j int) bool { return want[i].pos < want[j].pos })
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("%s %s page %d take of row %d read %v, want the metadata, one chunk and the dictionary %v", v, f.name, p, row, got, want)
				}
				checked++
			}
		}
	}
	if checked == 0 {
		t.Fatal("no multi-chunk flat mini-block page in the LanceDB files")
	}
	t.Logf("%d pages checked, %d with a dictionary", checked, dicts)
}
