package lance_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/mvd-project/mvd/internal/lancedbtest"
	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/lance/datawriter"
	"github.com/mvd-project/mvd/vfs"
)

// bench5M is generated once per test binary: a 5M-row stable-row-id table
// in five fragments whose last version updates one row.
var bench5M struct {
	once sync.Once
	dir  string
}

func bench5MTable(b *testing.B) string {
	bench5M.once.Do(func() {
		bench5M.dir = lancedbtest.Generate(b, []string{"bench_5m"}, "--no-answers")
	})
	if bench5M.dir == "" {
		b.Fatal("bench_5m was not generated")
	}
	return filepath.Join(bench5M.dir, "bench_5m.lance")
}

// BenchmarkChangesOneRowUpdate computes the change set of a one-row update
// in a 5M-row table (target: ≤ 5 ms, no data-file reads). It reports the
// bytes and files read per change set, and, measured in the same run, what
// LanceDB needs just to scan the row ids and versions of both versions.
func BenchmarkChangesOneRowUpdate(b *testing.B) {
	root := bench5MTable(b)
	var dataOpens int
	cfs := vfs.NewCountingFS(vfs.OS(), func(name string) {
		if strings.Contains(filepath.ToSlash(name), "/data/") {
			dataOpens++
		}
	})
	tbl, err := lance.Open(context.Background(), cfs, root)
	if err != nil {
		b.Fatal(err)
	}
	to, err := tbl.LatestVersion(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	from := to - 1
	cfs.Reset()
	b.ResetTimer()
	var cs *lance.ChangeSet
	for b.Loop() {
		if cs, err = tbl.Changes(context.Background(), from, to); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if dataOpens != 0 {
		b.Fatalf("the change set opened %d data files", dataOpens)
	}
	if cs.Updated.GetCardinality() != 1 || !cs.Inserted.IsEmpty() || !cs.Deleted.IsEmpty() {
		b.Fatalf("one-row update gave %d inserted, %d updated, %d deleted", cs.Inserted.GetCardinality(), cs.Updated.GetCardinality(), cs.Deleted.GetCardinality())
	}
	b.ReportMetric(float64(cfs.BytesRead())/float64(b.N), "bytes-read/op")
	b.ReportMetric(float64(cfs.Opens())/float64(b.N), "files-opened/op")
	b.ReportMetric(float64(cs.Stats.FragmentsExamined), "fragments-examined")
	b.ReportMetric(float64(cs.Stats.FragmentsSkipped), "fragments-skipped")

	out := lancedbtest.RunNode(b, "bench_changes.mjs", root, strconv.FormatUint(from, 10), strconv.FormatUint(to, 10))
	var ldb struct {
		ScanMS      float64 `json:"scan_ms"`
		RowsScanned int64   `json:"rows_scanned"`
	}
	if err := json.Unmarshal(out, &ldb); err != nil {
		b.Fatalf("bench_changes.mjs: %v: %s", err, out)
	}
	mvdMS := float64(b.Elapsed().Nanoseconds()) / float64(b.N) / 1e6
	b.ReportMetric(ldb.ScanMS, "lancedb-scan-ms")
	b.ReportMetric(ldb.ScanMS/mvdMS, "speedup-vs-lancedb-scan")
}

// BenchmarkChangesManyFragments computes the change set of a one-row
// append to a table of 1,000 one-row fragments (what a view accumulates
// from single-row refreshes before compaction): the cost of recognising
// the unchanged fragments, with both manifests already decoded.
func BenchmarkChangesManyFragments(b *testing.B) {
	ctx := context.Background()
	fsys := vfs.Unsynced(vfs.OS())
	schema, err := lance.NewSchemaFromArrow(baseSchema)
	if err != nil {
		b.Fatal(err)
	}
	root := filepath.Join(b.TempDir(), "many.lance")
	var frags []lance.NewFragment
	for i := range 1000 {
		nf, err := datawriter.WriteFragments(fsys, root, schema, "2.2", []arrow.RecordBatch{baseRecord(idRange(int64(i), int64(i+1)))})
		if err != nil {
			b.Fatal(err)
		}
		frags = append(frags, nf...)
	}
	tbl, from, err := lance.Create(ctx, fsys, root, lance.CreateOptions{Schema: schema, Fragments: frags})
	if err != nil {
		b.Fatal(err)
	}
	nf, err := datawriter.WriteFragments(fsys, root, schema, "2.2", []arrow.RecordBatch{baseRecord(idRange(5000, 5001))})
	if err != nil {
		b.Fatal(err)
	}
	to, err := tbl.Commit(ctx, from, &lance.Commit{Fragments: nf})
	if err != nil {
		b.Fatal(err)
	}
	// Read both back from disk, as a reader would.
	if from, err = tbl.Checkout(ctx, 1); err != nil {
		b.Fatal(err)
	}
	var cs *lance.ChangeSet
	for b.Loop() {
		if cs, err = lance.Changes(ctx, from, to); err != nil {
			b.Fatal(err)
		}
	}
	if cs.Inserted.GetCardinality() != 1 || cs.Stats.FragmentsSkipped != 1000 {
		b.Fatalf("inserted %d, skipped %d", cs.Inserted.GetCardinality(), cs.Stats.FragmentsSkipped)
	}
}
