package datawriter_test

import (
	"bytes"
	"context"
	"errors"
	"path"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/lance/datafile"
	"github.com/mvd-project/mvd/lance/datawriter"
	"github.com/mvd-project/mvd/vfs"
)

// TestRoundTripGoReader reads the files the writer produces back with
// mvd's own data file reader (no LanceDB needed), for every version.
func TestRoundTripGoReader(t *testing.T) {
	for _, version := range []lance.FileVersion{"2.2", "2.1", "2.0"} {
		t.Run(string(version), func(t *testing.T) {
			as := allTypesSchema()
			schema, err := lance.NewSchemaFromArrow(as)
			if err != nil {
				t.Fatal(err)
			}
			rec := allTypesRecord(as, 0, 3000, version != "2.0")
			root := filepath.Join(t.TempDir(), "rt.lance")
			df, n, err := datawriter.WriteFile(vfs.OS(), root, schema, version, []arrow.RecordBatch{rec})
			if err != nil {
				t.Fatal(err)
			}
			f, err := vfs.OS().Open(path.Join(root, "data", df.Path))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if uint64(f.Size()) != df.SizeBytes {
				t.Fatalf("file has %d bytes, DataFile says %d", f.Size(), df.SizeBytes)
			}
			rd, err := datafile.Open(f, f.Size(), df.Path)
			if err != nil {
				t.Fatal(err)
			}
			if rd.NumRows() != n {
				t.Fatalf("reader sees %d rows, wrote %d", rd.NumRows(), n)
			}
			for i, field := range schema.Fields {
				dt, _ := field.ArrowType()
				got, err := rd.ReadField(context.Background(), field.ID, dt, 0, n, memory.DefaultAllocator)
				if err != nil {
					t.Errorf("field %q: %v", field.Name, err)
					continue
				}
				bad := 0
				for r := 0; r < int(n); r++ {
					g, _ := datafile.AppendJSON(nil, got, r)
					w, _ := datafile.AppendJSON(nil, rec.Column(i), r)
					if !bytes.Equal(g, w) {
						if bad++; bad <= 2 {
							t.Errorf("field %q row %d: read %s, wrote %s", field.Name, r, g, w)
						}
					}
				}
			}
		})
	}
}

// TestFragmentCap splits an append at LanceDB's fragment size.
func TestFragmentCap(t *testing.T) {
	as := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int32}}, nil)
	schema, err := lance.NewSchemaFromArrow(as)
	if err != nil {
		t.Fatal(err)
	}
	b := array.NewInt32Builder(memory.DefaultAllocator)
	const n = lance.MaxRowsPerFragment + 5
	for i := 0; i < n; i++ {
		b.Append(int32(i))
	}
	col := b.NewArray()
	half := int64(n / 2)
	recs := []arrow.RecordBatch{
		array.NewRecordBatch(as, []arrow.Array{array.NewSlice(col, 0, half)}, half),
		array.NewRecordBatch(as, []arrow.Array{array.NewSlice(col, half, n)}, n-half),
	}
	frags, err := datawriter.WriteFragments(vfs.OS(), filepath.Join(t.TempDir(), "cap.lance"), schema, "2.2", recs)
	if err != nil {
		t.Fatal(err)
	}
	if len(frags) != 2 || frags[0].PhysicalRows != lance.MaxRowsPerFragment || frags[1].PhysicalRows != 5 {
		t.Fatalf("fragments: %+v", frags)
	}
}

// TestNullUnderNullParent accepts a non-nullable struct member that is
// null only where its struct is null (legal Arrow), and refuses a null
// under a valid struct.
func TestNullUnderNullParent(t *testing.T) {
	st := arrow.StructOf(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int32})
	as := arrow.NewSchema([]arrow.Field{{Name: "st", Type: st, Nullable: true}}, nil)
	schema, err := lance.NewSchemaFromArrow(as)
	if err != nil {
		t.Fatal(err)
	}
	build := func(nullChildUnderValid bool) arrow.RecordBatch {
		b := array.NewStructBuilder(memory.DefaultAllocator, st)
		b.AppendNull() // also appends a null child under the null struct
		b.Append(true)
		if nullChildUnderValid {
			b.FieldBuilder(0).AppendNull()
		} else {
			b.FieldBuilder(0).(*array.Int32Builder).Append(7)
		}
		return array.NewRecordBatch(as, []arrow.Array{b.NewArray()}, 2)
	}
	root := filepath.Join(t.TempDir(), "n.lance")
	if _, _, err := datawriter.WriteFile(vfs.OS(), root, schema, "2.2", []arrow.RecordBatch{build(false)}); err != nil {
		t.Fatalf("null child under a null struct: %v", err)
	}
	if _, _, err := datawriter.WriteFile(vfs.OS(), root, schema, "2.2", []arrow.RecordBatch{build(true)}); !errors.Is(err, datawriter.ErrSchemaMismatch) {
		t.Fatalf("null child under a valid struct: err = %v, want ErrSchemaMismatch", err)
	}
}
