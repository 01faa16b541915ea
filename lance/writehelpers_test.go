package lance_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/mvd-project/mvd/internal/lancedbtest"
	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/vfs"
)

// wrCopyFixture copies a committed fixture table into a temporary directory
// so a test can commit to it.
func wrCopyFixture(t *testing.T, name string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), name+".lance")
	if err := os.CopyFS(dst, os.DirFS(filepath.Join(lancedbtest.FixturesDir(t), name+".lance"))); err != nil {
		t.Fatal(err)
	}
	return dst
}

// wrLanceDBView is what LanceDB reads at one version (interop.mjs read).
type wrLanceDBView struct {
	Version        uint64                       `json:"version"`
	Versions       []uint64                     `json:"versions"`
	NumRows        uint64                       `json:"num_rows"`
	Schema         json.RawMessage              `json:"schema"`
	SchemaMetadata map[string]string            `json:"schema_metadata"`
	Rows           map[string]lancedbtest.Runs  `json:"rows"`
	Data           []map[string]json.RawMessage `json:"data"`
}

func wrLanceDBRead(t *testing.T, table string, version ...uint64) *wrLanceDBView {
	t.Helper()
	args := []string{"interop.mjs", "read", table}
	if len(version) > 0 {
		args = append(args, utoa(version[0]))
	}
	out := lancedbtest.RunNode(t, args...)
	var v wrLanceDBView
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("decode interop read: %v\n%s", err, out)
	}
	return &v
}

// wrLanceDBOps runs LanceDB operations on a table and returns the version
// LanceDB ends at.
func wrLanceDBOps(t *testing.T, table string, ops ...map[string]any) uint64 {
	t.Helper()
	b, _ := json.Marshal(ops)
	out := lancedbtest.RunNode(t, "interop.mjs", "ops", table, string(b))
	var r struct {
		Version uint64 `json:"version"`
	}
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("decode interop ops: %v\n%s", err, out)
	}
	return r.Version
}

// wrGoRowMeta scans a version's row metadata with mvd's reader.
func wrGoRowMeta(t *testing.T, tbl *lance.Table, v uint64) map[string][]uint64 {
	t.Helper()
	m, err := tbl.Checkout(context.Background(), v)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]uint64{}
	err = m.ScanRowMeta(context.Background(), func(r lance.RowMeta) error {
		out["_rowid"] = append(out["_rowid"], r.RowID)
		out["_rowaddr"] = append(out["_rowaddr"], r.RowAddr)
		out["_row_created_at_version"] = append(out["_row_created_at_version"], r.CreatedAt)
		out["_row_last_updated_at_version"] = append(out["_row_last_updated_at_version"], r.LastUpdatedAt)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// wrSameRowMeta checks mvd's reader against LanceDB's scan of one version.
func wrSameRowMeta(t *testing.T, tbl *lance.Table, view *wrLanceDBView) {
	t.Helper()
	got := wrGoRowMeta(t, tbl, view.Version)
	for _, col := range []string{"_rowid", "_rowaddr", "_row_created_at_version", "_row_last_updated_at_version"} {
		if !equalIDs(got[col], view.Rows[col]) {
			t.Errorf("version %d: %s: mvd and LanceDB differ: %s", view.Version, col, diffIDs(got[col], view.Rows[col]))
		}
	}
}

func wrOpenTable(t *testing.T, root string) *lance.Table {
	t.Helper()
	tbl, err := lance.Open(context.Background(), vfs.OS(), root)
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

// wrDataIDs returns the "id" column of LanceDB's rows, in scan order.
func wrDataIDs(t *testing.T, view *wrLanceDBView) []int64 {
	t.Helper()
	ids := make([]int64, len(view.Data))
	for i, r := range view.Data {
		if err := json.Unmarshal(r["id"], &ids[i]); err != nil {
			t.Fatal(err)
		}
	}
	return ids
}

func wrWithout(ids []int64, drop func(int64) bool) []int64 {
	return slices.DeleteFunc(slices.Clone(ids), drop)
}

// wrCheckout returns the snapshot of version v (0: the latest).
func wrCheckout(t *testing.T, tbl *lance.Table, v uint64) *lance.Snapshot {
	t.Helper()
	s, err := tbl.Checkout(context.Background(), v)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
