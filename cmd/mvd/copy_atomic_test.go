package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/lance/datawriter"
	"github.com/mvd-project/mvd/vfs"
	"github.com/mvd-project/mvd/vfs/errorfs"
)

// nullStructTable writes a 2.2 table of n rows whose struct column has
// nulls, which a 2.0 copy cannot store, so such a copy fails after reading.
func nullStructTable(t *testing.T, n int) string {
	t.Helper()
	st := arrow.StructOf(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int32, Nullable: true})
	as := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "s", Type: st, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, as)
	defer b.Release()
	sb := b.Field(1).(*array.StructBuilder)
	for i := range n {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		if i%3 == 1 {
			sb.AppendNull()
			sb.FieldBuilder(0).(*array.Int32Builder).AppendNull()
		} else {
			sb.Append(true)
			sb.FieldBuilder(0).(*array.Int32Builder).Append(7)
		}
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	return writeTestTable(t, rec)
}

// writeTestTable writes rec as a new 2.2 table with mvd's writer.
func writeTestTable(t *testing.T, rec arrow.RecordBatch) string {
	t.Helper()
	schema, err := lance.NewSchemaFromArrow(rec.Schema())
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(t.TempDir(), "src.lance")
	w := datawriter.NewFragmentWriter(vfs.OS(), root, schema, "2.2")
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	frags, err := w.Finish()
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := lance.Create(context.Background(), vfs.OS(), root, lance.CreateOptions{Schema: schema, Fragments: frags, DataFileVersion: "2.2"}); err != nil {
		t.Fatal(err)
	}
	return root
}

// entries lists a directory's names.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

// TestCopyDestinations checks the edge cases of a copy's destination: an
// empty path is a usage error, a failed copy leaves nothing behind (so the
// retry works), an empty directory is fine and a non-empty one is refused.
func TestCopyDestinations(t *testing.T) {
	src := nullStructTable(t, 50)
	for _, args := range [][]string{{"table", "copy", src, ""}, {"table", "copy", "", src + "2"}} {
		code, out, errOut := runCLI(args...)
		if code != 2 || out != "" || !strings.Contains(errOut, "non-empty SRC and DST") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q", args, code, out, errOut)
		}
	}

	parent := t.TempDir()
	dst := filepath.Join(parent, "copy.lance")
	code, _, errOut := runCLI("table", "copy", src, dst, "--data-storage-version", "2.0")
	if code != 1 || !strings.Contains(errOut, "2.0 files cannot store null structs") || strings.Count(errOut, "\n") != 1 {
		t.Fatalf("copy into 2.0: exit %d, stderr %q", code, errOut)
	}
	if names := entries(t, parent); len(names) != 0 {
		t.Fatalf("a failed copy left %v behind", names)
	}
	code, out, errOut := runCLI("table", "copy", src, dst)
	if code != 0 || !strings.Contains(out, "copied 50 rows") {
		t.Fatalf("retry: exit %d: %s %s", code, out, errOut)
	}
	if names := entries(t, parent); len(names) != 1 || names[0] != "copy.lance" {
		t.Fatalf("after the copy the parent holds %v", names)
	}

	empty := filepath.Join(t.TempDir(), "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := runCLI("table", "copy", src, empty); code != 0 || !strings.Contains(out, "copied 50 rows") {
		t.Fatalf("copy into an empty directory: exit %d: %s %s", code, out, errOut)
	}
	if code, _, errOut := runCLI("table", "copy", src, empty); code != 1 || !strings.Contains(errOut, "already exists") {
		t.Fatalf("copy onto a table: exit %d: %s", code, errOut)
	}
	full := t.TempDir()
	os.WriteFile(filepath.Join(full, "notes.txt"), []byte("keep me"), 0o644)
	if code, _, errOut := runCLI("table", "copy", src, full); code != 1 || !strings.Contains(errOut, "already exists") {
		t.Fatalf("copy onto a non-empty directory: exit %d: %s", code, errOut)
	}
	if b, err := os.ReadFile(filepath.Join(full, "notes.txt")); err != nil || string(b) != "keep me" {
		t.Fatalf("the non-empty directory was touched: %q %v", b, err)
	}
}

// TestCopyFaults fails every durable filesystem operation of a copy in
// turn and checks that the destination is then either absent or a complete
// table, and that no temporary directory is left behind.
func TestCopyFaults(t *testing.T) {
	src := nullStructTable(t, 20)
	run := func(fsys vfs.FS, dst string) error {
		return tableCopy(context.Background(), fsys, src, dst, copyFlags{stable: true}, io.Discard, io.Discard)
	}
	counter := errorfs.NewCounter(errorfs.OpDurable)
	if err := run(errorfs.Wrap(vfs.OS(), counter), filepath.Join(t.TempDir(), "c.lance")); err != nil {
		t.Fatal(err)
	}
	if counter.Count() < 5 {
		t.Fatalf("only %d injection points", counter.Count())
	}
	for n := 1; n <= counter.Count(); n++ {
		parent := t.TempDir()
		dst := filepath.Join(parent, "c.lance")
		inj := errorfs.FailNth(n, errorfs.OpDurable)
		err := run(errorfs.Wrap(vfs.OS(), inj), dst)
		p, _ := inj.Injected()
		if err != nil && !strings.Contains(err.Error(), errorfs.ErrInjected.Error()) {
			t.Fatalf("failing %s: err %v", p, err)
		}
		// A best-effort write (the version hint) may fail without failing
		// the copy; every other failure fails it.
		names := entries(t, parent)
		switch {
		case len(names) == 0 && err != nil:
		case len(names) == 1 && names[0] == "c.lance":
			// In place after a failure only if the final directory sync
			// failed, after the rename.
			if err != nil && (p.Op != errorfs.OpSyncDir || p.Path != parent) {
				t.Fatalf("failing %s left %s in place (%v)", p, dst, err)
			}
			var out bytes.Buffer
			if code := run2(dst, &out); code != 0 || !strings.Contains(out.String(), `"id":19`) {
				t.Fatalf("failing %s: the copy in place is not complete: %s", p, out.String())
			}
		default:
			t.Fatalf("failing %s left %v (%v)", p, names, err)
		}
	}
}

// run2 scans a table through the CLI.
func run2(table string, out *bytes.Buffer) int {
	return run([]string{"table", "scan", table}, out, io.Discard)
}
