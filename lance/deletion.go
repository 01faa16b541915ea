package lance

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/mvd-project/mvd/vfs"
)

// deletedOffsets returns the deleted row offsets of a fragment, or an empty
// bitmap when it has no deletion file.
func (t *Table) deletedOffsets(f *Fragment) (*roaring.Bitmap, error) {
	if f.Deletion == nil {
		return roaring.New(), nil
	}
	name := f.Deletion.fileName(f.ID)
	raw, err := vfs.ReadObject(t.objs, t.path(deletionsDir, name))
	if err != nil {
		return nil, t.wrap(f.version, "read deletion file "+name, err)
	}
	bm, err := decodeDeletionFile(f.Deletion.Kind, raw)
	if err != nil {
		return nil, t.wrap(f.version, "decode deletion file "+name, err)
	}
	if card := bm.GetCardinality(); f.Deletion.NumDeletedRows != 0 && card != f.Deletion.NumDeletedRows {
		return nil, t.errorf(f.version, "decode deletion file "+name, "%w: holds %d offsets, manifest records %d", ErrCorrupt, card, f.Deletion.NumDeletedRows)
	}
	if !bm.IsEmpty() && uint64(bm.Maximum()) >= f.PhysicalRows {
		return nil, t.errorf(f.version, "decode deletion file "+name, "%w: offset %d beyond the fragment's %d rows", ErrCorrupt, bm.Maximum(), f.PhysicalRows)
	}
	return bm, nil
}

// decodeDeletionFile decodes the bytes of a deletion file of either kind.
func decodeDeletionFile(kind DeletionKind, raw []byte) (*roaring.Bitmap, error) {
	switch kind {
	case DeletionBitmap:
		bm := roaring.New()
		if _, err := bm.ReadFrom(bytes.NewReader(raw)); err != nil {
			return nil, corruptf("roaring bitmap: %v", err)
		}
		return bm, nil
	case DeletionArrow:
		return decodeArrowDeletions(raw)
	}
	return nil, unsupportedf("deletion file kind %d", kind)
}

// decodeArrowDeletions reads an Arrow IPC file with one column of deleted
// offsets (uint32 as LanceDB writes it; int32 as older docs describe).
// LanceDB compresses the record batch body with zstd.
func decodeArrowDeletions(raw []byte) (bm *roaring.Bitmap, err error) {
	defer func() {
		// arrow-go's IPC reader can panic on some malformed inputs; a
		// deletion file is untrusted input, so turn that into an error.
		if r := recover(); r != nil {
			bm, err = nil, corruptf("arrow deletion file: %v", r)
		}
	}()
	mem := &budgetAllocator{Allocator: memory.NewGoAllocator(), left: deletionDecodeBudget(len(raw))}
	rd, err := ipc.NewFileReader(bytes.NewReader(raw), ipc.WithAllocator(mem))
	if err != nil {
		return nil, corruptf("arrow deletion file: %v", err)
	}
	defer rd.Close()
	if rd.Schema().NumFields() != 1 {
		return nil, corruptf("arrow deletion file has %d columns, want 1", rd.Schema().NumFields())
	}
	bm = roaring.New()
	for i := 0; i < rd.NumRecords(); i++ {
		rec, err := rd.RecordBatch(i)
		if err != nil {
			return nil, corruptf("arrow deletion file batch %d: %v", i, err)
		}
		if err := addOffsets(bm, rec.Column(0)); err != nil {
			return nil, err
		}
	}
	return bm, nil
}

func addOffsets(bm *roaring.Bitmap, col arrow.Array) error {
	if col.NullN() > 0 {
		return corruptf("arrow deletion file has null offsets")
	}
	switch a := col.(type) {
	case *array.Uint32:
		bm.AddMany(a.Uint32Values())
	case *array.Int32:
		for _, v := range a.Int32Values() {
			if v < 0 {
				return corruptf("arrow deletion file has negative offset %d", v)
			}
			bm.Add(uint32(v))
		}
	default:
		return fmt.Errorf("%w: arrow deletion file column of type %s", ErrUnsupported, col.DataType())
	}
	return nil
}

// deletionDecodeBudget bounds the memory decoding a deletion file may
// allocate. LanceDB writes .arrow files only below ~5000 offsets, so even a
// generous multiple of the file size is far above any real need, while a
// corrupt length field cannot make the reader allocate gigabytes.
func deletionDecodeBudget(fileSize int) int {
	return 16<<20 + 256*fileSize
}

// errBudget is the panic value of an allocation over budget.
var errBudget = errors.New("allocation over the decode budget")

// budgetAllocator fails (by panicking, recovered by the caller) once the
// total allocated exceeds its budget.
type budgetAllocator struct {
	memory.Allocator
	left int
}

func (a *budgetAllocator) Allocate(size int) []byte {
	if size < 0 || size > a.left {
		panic(errBudget)
	}
	a.left -= size
	return a.Allocator.Allocate(size)
}

func (a *budgetAllocator) Reallocate(size int, b []byte) []byte {
	if grow := size - len(b); grow > a.left {
		panic(errBudget)
	} else if grow > 0 {
		a.left -= grow
	}
	return a.Allocator.Reallocate(size, b)
}
