package plan

import (
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// selectSource is a source schema with strings a scan may deliver as
// dictionaries (kind, code, s) and numbers.
var selectSource = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "kind", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "code", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "amount", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	{Name: "n", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
}, nil)

// selectBatch builds rows of selectSource with nulls; the string columns
// come plain and as dictionary arrays whose dictionaries hold one item no
// row uses ("x": CAST(code AS INT) fails on it alone).
func selectBatch(t *testing.T, mem memory.Allocator, rows int, nullKinds bool) (plain, dict arrow.RecordBatch) {
	rng := rand.New(rand.NewPCG(7, uint64(rows)))
	kinds := []string{"purchase", "refund", "a", "b", "A"}
	codes := []string{"1", "2", "3"}
	ss := []string{"xa", "xb", "ya", "", "x%"}
	ib := array.NewInt64Builder(mem)
	kb, cb, sb := array.NewStringBuilder(mem), array.NewStringBuilder(mem), array.NewStringBuilder(mem)
	ab, nb := array.NewFloat64Builder(mem), array.NewInt64Builder(mem)
	defer func() {
		for _, b := range []array.Builder{ib, kb, cb, sb, ab, nb} {
			b.Release()
		}
	}()
	var kIdx, cIdx, sIdx []int
	for i := range rows {
		ib.Append(int64(i))
		k := rng.IntN(len(kinds) + 1)
		if k == len(kinds) && nullKinds {
			kb.AppendNull()
			kIdx = append(kIdx, -1)
		} else {
			k %= len(kinds)
			kb.Append(kinds[k])
			kIdx = append(kIdx, k)
		}
		c := rng.IntN(len(codes))
		cb.Append(codes[c])
		cIdx = append(cIdx, c)
		s := rng.IntN(len(ss))
		sb.Append(ss[s])
		sIdx = append(sIdx, s)
		if rng.IntN(10) == 0 {
			ab.AppendNull()
		} else {
			ab.Append(float64(rng.IntN(10000)) / 100)
		}
		if rng.IntN(4) == 0 {
			nb.AppendNull()
		} else {
			nb.Append(int64(rng.IntN(5)))
		}
	}
	cols := []arrow.Array{ib.NewArray(), kb.NewArray(), cb.NewArray(), sb.NewArray(), ab.NewArray(), nb.NewArray()}
	defer releaseAll(cols)
	plain = array.NewRecordBatch(selectSource, cols, int64(rows))
	dictOf := func(items []string, idx []int) arrow.Array {
		vb := array.NewStringBuilder(mem)
		defer vb.Release()
		vb.AppendValues(append(append([]string{}, items...), "x"), nil)
		vals := vb.NewArray()
		defer vals.Release()
		cb := array.NewInt32Builder(mem)
		defer cb.Release()
		for _, k := range idx {
			if k < 0 {
				cb.AppendNull()
			} else {
				cb.Append(int32(k))
			}
		}
		codes := cb.NewArray()
		defer codes.Release()
		return array.NewDictionaryArray(&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}, codes, vals)
	}
	dcols := []arrow.Array{cols[0], dictOf(kinds, kIdx), dictOf(codes, cIdx), dictOf(ss, sIdx), cols[4], cols[5]}
	for _, i := range []int{0, 4, 5} {
		dcols[i].Retain()
	}
	defer releaseAll(dcols)
	fields := selectSource.Fields()
	for i := range fields {
		fields[i].Type = dcols[i].DataType()
	}
	dict = array.NewRecordBatch(arrow.NewSchema(fields, nil), dcols, int64(rows))
	return plain, dict
}

// only keeps the named columns of rec.
func only(rec arrow.RecordBatch, names []string) arrow.RecordBatch {
	var fields []arrow.Field
	var cols []arrow.Array
	for _, n := range names {
		i := rec.Schema().FieldIndices(n)[0]
		fields = append(fields, rec.Schema().Field(i))
		cols = append(cols, rec.Column(i))
	}
	return array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, rec.NumRows())
}

// TestSelectMatchesFilter: Select, over plain columns and over dictionary
// columns (terms evaluated per dictionary item, safe terms on the rows
// left), keeps exactly the rows the whole filter keeps, and fails exactly
// where it fails.
func TestSelectMatchesFilter(t *testing.T) {
	filters := []string{
		"kind = 'purchase' AND amount > 10",
		"kind = 'refund' AND amount > 50",
		"kind = 'purchase'",
		"amount > 10",
		"kind <> 'refund' OR amount < 5",
		"amount > 10 AND kind = 'a' AND n IS NULL",
		"NOT (kind = 'b') AND s LIKE 'x%'",
		"upper(kind) = 'A' AND amount >= 1",
		"kind IN ('a', 'b') AND amount BETWEEN 10 AND 20",
		"kind IS NULL AND amount > 10",
		"kind IS NOT NULL AND n > 2 AND amount < 50",
		"CAST(code AS INT) > 1 AND amount > 5",
		"CAST(s AS INT) > 1 AND kind = 'a'",
		"kind = 'a' AND n / 0 > 1",
		// Fails on the rows the first term drops: must fail all the same.
		"kind = 'purchase' AND CAST(CASE WHEN kind = 'purchase' THEN '1' ELSE 'x' END AS INT) > 0",
		"amount > 50 AND CAST(CASE WHEN amount > 50 THEN '1' ELSE 'x' END AS INT) > 0",
		"kind = 'a' AND 10 / n > 3",
		"true AND kind = 'b'",
		"kind = kind AND amount = amount",
		"s = kind AND n = 1",
		"n >= 1 AND kind > 'a'",
		"amount > 10 AND kind = 'purchase' AND s = 'xa' AND code = '2'",
	}
	for _, nullKinds := range []bool{false, true} {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		plain, dict := selectBatch(t, mem, 3000, nullKinds)
		for _, f := range filters {
			p, err := Compile(Definition{SourceTable: "t", Filter: f}, selectSource)
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			fc := p.FilterColumns()
			want, werr := p.filter.Selection(mem, plain)
			for _, in := range []arrow.RecordBatch{plain, dict} {
				rec := only(in, fc)
				got, err := p.Select(mem, rec)
				rec.Release()
				if (err != nil) != (werr != nil) {
					t.Fatalf("%s (null kinds %v): Select error %v, the filter's %v", f, nullKinds, err, werr)
				}
				if werr == nil && !reflect.DeepEqual(got, want) && !(len(got) == 0 && len(want) == 0) {
					t.Fatalf("%s (null kinds %v, %s): %d rows selected, the filter keeps %d", f, nullKinds, rec.Schema(), len(got), len(want))
				}
			}
		}
		plain.Release()
		dict.Release()
		mem.AssertSize(t, 0)
	}
}

// TestSplitFilter: the terms, which are evaluated per dictionary item, and
// which may run on a subset of the rows.
func TestSplitFilter(t *testing.T) {
	for _, c := range []struct {
		filter string
		cols   []string
		safe   []bool
	}{
		{"kind = 'purchase' AND amount > 10", []string{"kind", "amount"}, []bool{true, true}},
		{"(kind = 'a' AND n > 1) AND NOT s = 'x'", []string{"kind", "n", "s"}, []bool{true, true, true}},
		{"kind = 'a' OR amount > 1", []string{""}, []bool{true}},
		{"upper(kind) = 'A' AND n / 2 > 1", []string{"kind", "n"}, []bool{false, false}},
		{"CAST(code AS INT) > 1 AND kind = 5", []string{"code", "kind"}, []bool{false, false}},
		{"amount IS NULL AND s > kind", []string{"amount", ""}, []bool{true, false}},
	} {
		p, err := Compile(Definition{SourceTable: "t", Filter: c.filter}, selectSource)
		if err != nil {
			// kind = 5 is refused at create: nothing to split.
			continue
		}
		if len(p.conjuncts) != len(c.cols) {
			t.Fatalf("%s: %d terms, want %d", c.filter, len(p.conjuncts), len(c.cols))
		}
		for i, cj := range p.conjuncts {
			if cj.col != c.cols[i] || cj.safe != c.safe[i] {
				t.Errorf("%s term %d: column %q safe %v, want %q %v", c.filter, i, cj.col, cj.safe, c.cols[i], c.safe[i])
			}
		}
	}
}

// TestSelectDictionaryTypedColumn: a source column typed as a dictionary
// arrives as one and is evaluated as such, not taken for a dictionary the
// scan made of a string column.
func TestSelectDictionaryTypedColumn(t *testing.T) {
	dt := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}
	source := arrow.NewSchema([]arrow.Field{{Name: "kind", Type: dt, Nullable: true}, {Name: "amount", Type: arrow.PrimitiveTypes.Float64}}, nil)
	p, err := Compile(Definition{SourceTable: "t", Filter: "kind = 'a' AND amount > 1"}, source)
	if err != nil {
		t.Fatal(err)
	}
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	db := array.NewDictionaryBuilder(mem, dt).(*array.BinaryDictionaryBuilder)
	ab := array.NewFloat64Builder(mem)
	for i := range 500 {
		if i%7 == 0 {
			db.AppendNull()
		} else if err := db.AppendString([]string{"a", "b", "c"}[i%3]); err != nil {
			t.Fatal(err)
		}
		ab.Append(float64(i % 5))
	}
	cols := []arrow.Array{db.NewArray(), ab.NewArray()}
	db.Release()
	ab.Release()
	rec := array.NewRecordBatch(source, cols, 500)
	releaseAll(cols)
	defer rec.Release()
	want, err := p.filter.Selection(mem, rec)
	if err != nil {
		t.Fatal(err)
	}
	got, err := p.Select(mem, rec)
	if err != nil {
		t.Fatal(err)
	}
	if len(want) == 0 || !reflect.DeepEqual(got, want) {
		t.Fatalf("%d rows selected, the filter keeps %d", len(got), len(want))
	}
}
