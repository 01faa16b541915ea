package lance

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/RoaringBitmap/roaring/v2/roaring64"

	"github.com/mvd-project/mvd/lance/internal/rowid"
)

// seedFiles adds the files of the committed fixtures that match keep as
// fuzz seeds, so fuzzing starts from real LanceDB bytes.
func seedFiles(f *testing.F, keep func(path string) bool, add func(b []byte, path string)) {
	root := filepath.Join("..", "testdata", "fixtures")
	n := 0
	_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !keep(p) || n >= 40 {
			return nil
		}
		b, err := os.ReadFile(p)
		if err == nil {
			add(b, p)
			n++
		}
		return nil
	})
	if n == 0 {
		f.Log("no fixture seeds found")
	}
}

func manifestSeeds(f *testing.F, each func(m *Manifest)) {
	seedFiles(f, func(p string) bool { return strings.HasSuffix(p, ".manifest") }, func(b []byte, _ string) {
		if m, err := decodeManifest(b); err == nil && each != nil {
			each(m)
		}
	})
}

func FuzzDecodeManifest(f *testing.F) {
	seedFiles(f, func(p string) bool { return strings.HasSuffix(p, ".manifest") }, func(b []byte, _ string) { f.Add(b) })
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := decodeManifest(b)
		if err != nil {
			return
		}
		// A manifest that decodes must be usable without panics.
		_ = m.LiveRows()
		if _, err := m.Schema.Arrow(); err != nil {
			return
		}
	})
}

func FuzzDecodeRowIDSequence(f *testing.F) {
	manifestSeeds(f, func(m *Manifest) {
		for _, fr := range m.Fragments {
			if b := fr.pb.GetInlineRowIds(); b != nil {
				f.Add(b)
			}
		}
	})
	f.Fuzz(func(t *testing.T, b []byte) {
		seq, err := rowid.DecodeRowIDSequence(b)
		if err != nil {
			return
		}
		// Exercise every access path on a bounded prefix; they must agree.
		n := min(seq.Len(), 2000)
		var each []uint64
		seq.Each(0, n, func(v uint64) { each = append(each, v) })
		if uint64(len(each)) != n {
			t.Fatalf("Each gave %d values, want %d", len(each), n)
		}
		bm := roaring64.New()
		seq.AddRange(bm, 0, n)
		for i, v := range each {
			if at := seq.At(uint64(i)); at != v {
				t.Fatalf("At(%d) = %d, Each gave %d", i, at, v)
			}
			if !bm.Contains(v) {
				t.Fatalf("AddRange misses %d", v)
			}
			if p, ok := seq.Find(v); !ok || seq.At(p) != v {
				t.Fatalf("Find(%d) = %d, %v", v, p, ok)
			}
		}
	})
}

func FuzzDecodeVersionSequence(f *testing.F) {
	manifestSeeds(f, func(m *Manifest) {
		for _, fr := range m.Fragments {
			for _, b := range [][]byte{fr.pb.GetInlineCreatedAtVersions(), fr.pb.GetInlineLastUpdatedAtVersions()} {
				if b != nil {
					f.Add(b)
				}
			}
		}
	})
	f.Fuzz(func(t *testing.T, b []byte) {
		vs, err := rowid.DecodeVersionSequence(b)
		if err != nil {
			return
		}
		var covered uint64
		vs.Runs(func(lo, hi, v uint64) {
			if lo != covered || hi <= lo {
				t.Fatalf("run [%d, %d) after %d rows", lo, hi, covered)
			}
			if vs.At(lo) != v || vs.At(hi-1) != v {
				t.Fatalf("At disagrees with run [%d, %d) of version %d", lo, hi, v)
			}
			covered = hi
		})
		if covered != vs.Len() {
			t.Fatalf("runs cover %d rows, Len is %d", covered, vs.Len())
		}
	})
}

func FuzzDecodeDeletionFile(f *testing.F) {
	seedFiles(f, func(p string) bool { return strings.Contains(p, "_deletions") }, func(b []byte, p string) {
		kind := DeletionArrow
		if strings.HasSuffix(p, ".bin") {
			kind = DeletionBitmap
		}
		f.Add(uint8(kind), b)
	})
	f.Fuzz(func(t *testing.T, kind uint8, b []byte) {
		bm, err := decodeDeletionFile(DeletionKind(kind%2), b)
		if err == nil && bm == nil {
			t.Fatal("nil bitmap without an error")
		}
	})
}

func FuzzDecodeTransaction(f *testing.F) {
	seedFiles(f, func(p string) bool { return strings.HasSuffix(p, ".txn") }, func(b []byte, _ string) { f.Add(b) })
	f.Fuzz(func(t *testing.T, b []byte) {
		tx, err := decodeTransaction(b)
		if err == nil && tx.Operation == "" {
			t.Fatal("transaction without an operation name")
		}
		// operationOf, which walks the top-level fields only, agrees
		// wherever the full decode succeeds.
		op, oerr := operationOf(b)
		if err == nil && (oerr != nil || op != tx.Operation) {
			t.Fatalf("operationOf = %q, %v; decodeTransaction says %q", op, oerr, tx.Operation)
		}
	})
}
