package datafile

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestReaderAPI covers the Reader's contract outside decoding: versions,
// missing fields, argument checks.
func TestReaderAPI(t *testing.T) {
	ctx := context.Background()
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	for name, want := range map[string][2]int{"types_v20_5rows.lance": {2, 0}, "types_v21_5rows.lance": {2, 1}, "types_v22_5rows.lance": {2, 2}} {
		r := openSeed(t, name)
		if ma, mi := r.Version(); ma != want[0] || mi != want[1] {
			t.Errorf("%s: version %d.%d, want %d.%d", name, ma, mi, want[0], want[1])
		}
		if r.NumRows() != 5 || len(r.Schema().Flatten()) == 0 {
			t.Errorf("%s: %d rows, %d fields", name, r.NumRows(), len(r.Schema().Flatten()))
		}
	}
	r := openSeed(t, "types_v22_5rows.lance")
	i32 := arrow.PrimitiveTypes.Int32
	// A field the file does not hold reads as nulls.
	a, err := r.ReadField(ctx, 9999, i32, 1, 3, mem)
	if err != nil || a.Len() != 3 || a.NullN() != 3 {
		t.Fatalf("missing field: %v", err)
	}
	a.Release()
	a, err = r.ReadFieldRows(ctx, 9999, i32, []uint64{0, 4}, mem)
	if err != nil || a.Len() != 2 || a.NullN() != 2 {
		t.Fatalf("missing field rows: %v", err)
	}
	a.Release()
	// Empty reads.
	a, err = r.ReadField(ctx, 4, i32, 5, 0, mem)
	if err != nil || a.Len() != 0 {
		t.Fatalf("empty read: %v", err)
	}
	a.Release()
	// The same rows by range and by take.
	whole, err := r.ReadField(ctx, 4, i32, 0, 5, mem)
	if err != nil {
		t.Fatal(err)
	}
	defer whole.Release()
	take, err := r.ReadFieldRows(ctx, 4, i32, []uint64{1, 1, 3, 4}, mem)
	if err != nil {
		t.Fatal(err)
	}
	for k, row := range []int{1, 1, 3, 4} {
		g, _ := AppendJSON(nil, take, k)
		w, _ := AppendJSON(nil, whole, row)
		if string(g) != string(w) {
			t.Errorf("take %d: %s, range says %s", row, g, w)
		}
	}
	take.Release()
	bad := map[string]func() error{
		"past the end":  func() error { _, err := r.ReadField(ctx, 4, i32, 3, 3, mem); return err },
		"nil type":      func() error { _, err := r.ReadField(ctx, 4, nil, 0, 1, mem); return err },
		"unsorted rows": func() error { _, err := r.ReadFieldRows(ctx, 4, i32, []uint64{2, 1}, mem); return err },
		"row past end":  func() error { _, err := r.ReadFieldRows(ctx, 4, i32, []uint64{5}, mem); return err },
		"wrong type":    func() error { _, err := r.ReadField(ctx, 4, arrow.PrimitiveTypes.Int64, 0, 1, mem); return err },
		"child field": func() error {
			for _, f := range r.Schema().Flatten() {
				if f.ParentID >= 0 {
					_, err := r.ReadField(ctx, f.ID, i32, 0, 1, mem)
					return err
				}
			}
			t.Fatal("seed has no child field")
			return nil
		},
	}
	for name, f := range bad {
		if err := f(); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
