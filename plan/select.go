package plan

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/mvd-project/mvd/sqlexpr"
)

// conjunct is one AND-ed term of a view's filter. A row passes the filter
// exactly when every conjunct is TRUE for it (SQL's AND is TRUE only when
// both sides are), so the terms can be evaluated apart and their
// selections intersected.
type conjunct struct {
	c *sqlexpr.Compiled
	// col is the one top-level column the term reads ("" otherwise): over
	// a dictionary-encoded column the term is evaluated once per
	// dictionary item.
	col string
	// safe terms cannot fail at run time (comparisons of a column with a
	// literal of its kind), so evaluating them on the rows the other
	// terms kept raises no error the whole evaluation would not.
	safe bool
}

// splitFilter compiles the AND-ed terms of the filter e; nil when the
// filter is a single term or a term does not compile on its own (the
// whole filter is then evaluated as one).
func splitFilter(e sqlexpr.Expr, source *arrow.Schema) []conjunct {
	var terms []sqlexpr.Expr
	var walk func(e sqlexpr.Expr)
	walk = func(e sqlexpr.Expr) {
		if b, ok := e.(*sqlexpr.Binary); ok && b.Op == "AND" {
			walk(b.L)
			walk(b.R)
			return
		}
		terms = append(terms, e)
	}
	walk(e)
	out := make([]conjunct, 0, len(terms))
	for _, t := range terms {
		c, err := sqlexpr.CompileFilterExpr(t, source)
		if err != nil || c.OutputType().ID() != arrow.BOOL {
			return nil
		}
		cj := conjunct{c: c, safe: safeTerm(t, source)}
		if in := c.Inputs(); len(in) == 1 && source.HasField(in[0]) {
			cj.col = in[0]
		}
		out = append(out, cj)
	}
	return out
}

// safeTerm reports whether a filter term cannot fail at run time: a
// comparison or null test of a top-level column of a numeric or string
// type with a literal of the same kind, or AND/OR/NOT of such terms.
func safeTerm(e sqlexpr.Expr, source *arrow.Schema) bool {
	kindOf := func(e sqlexpr.Expr) string {
		switch x := e.(type) {
		case *sqlexpr.Column:
			if len(x.Path) != 1 {
				return ""
			}
			idx := source.FieldIndices(x.Path[0])
			if len(idx) != 1 {
				return ""
			}
			switch t := source.Field(idx[0]).Type; {
			case arrow.IsInteger(t.ID()) || arrow.IsFloating(t.ID()):
				return "num"
			case t.ID() == arrow.STRING || t.ID() == arrow.LARGE_STRING:
				return "str"
			}
		case *sqlexpr.Literal:
			switch x.Kind {
			case sqlexpr.LitInt, sqlexpr.LitFloat:
				return "lit-num"
			case sqlexpr.LitString:
				return "lit-str"
			}
		}
		return ""
	}
	switch x := e.(type) {
	case *sqlexpr.Binary:
		switch x.Op {
		case "AND", "OR":
			return safeTerm(x.L, source) && safeTerm(x.R, source)
		case "=", "<>", "<", "<=", ">", ">=":
			l, r := kindOf(x.L), kindOf(x.R)
			if l == "" || r == "" {
				return false
			}
			if l[0] == 'l' {
				l, r = r, l
			}
			return (l == "num" && r == "lit-num") || (l == "str" && r == "lit-str")
		}
	case *sqlexpr.Unary:
		return x.Op == "NOT" && safeTerm(x.X, source)
	case *sqlexpr.Is:
		k := kindOf(x.X)
		return x.What == "NULL" && (k == "num" || k == "str")
	}
	return false
}

// FilterColumns are the top-level source columns the filter reads, in
// source schema order; nil when the plan has no filter.
func (p *Plan) FilterColumns() []string {
	if p.filter == nil {
		return nil
	}
	return p.rootsInOrder(p.filter.Inputs())
}

// rootsInOrder returns the top-level source columns of the inputs, in
// source schema order (an empty, not nil, list when there are none).
func (p *Plan) rootsInOrder(inputs []string) []string {
	need := map[string]bool{}
	for _, in := range inputs {
		need[rootOf(p.source, in)] = true
	}
	out := []string{}
	for _, f := range p.source.Fields() {
		if need[f.Name] {
			out = append(out, f.Name)
		}
	}
	return out
}

// ProjectionColumns are the top-level source columns the projections
// read, in source schema order (possibly none): what a scan filtered by
// Select must deliver for ApplySelected.
func (p *Plan) ProjectionColumns() []string {
	var inputs []string
	for _, c := range p.projs {
		inputs = append(inputs, c.Inputs()...)
	}
	return p.rootsInOrder(inputs)
}

// Select returns the ascending indices of the rows of rec where the filter
// is TRUE (every row without a filter). rec holds FilterColumns by name; a
// string column may come as a dictionary array (int32 indices over values
// of the column's type), and a term reading only such a column is then
// evaluated once per dictionary item. Select gives exactly the rows
// Apply's filter keeps, and fails where it fails.
func (p *Plan) Select(mem memory.Allocator, rec arrow.RecordBatch) ([]int, error) {
	n := int(rec.NumRows())
	if p.filter == nil {
		return allRows(n), nil
	}
	ev := &selection{mem: mem, rec: rec, source: p.source}
	defer ev.release()
	terms := p.conjuncts
	if terms == nil {
		terms = []conjunct{{c: p.filter}}
	}
	// Terms that may fail run on every row, as the whole filter would;
	// then the per-item ones; the safe ones last, on the rows left.
	var sel []int // nil: every row so far
	for pass := 0; pass < 3; pass++ {
		for _, t := range terms {
			dict := t.col != "" && ev.isDict(t.col)
			switch {
			case pass == 0 && !t.safe && !dict, pass == 2 && t.safe && !dict:
				var err error
				if sel, err = ev.rows(t.c, sel, pass == 2); err != nil {
					return nil, err
				}
			case pass == 1 && dict:
				var err error
				if sel, err = ev.items(t, sel); err != nil {
					return nil, err
				}
			}
		}
	}
	if sel == nil {
		return allRows(n), nil
	}
	return sel, nil
}

func allRows(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// selection is the state of one Select call: the batch, and its
// dictionary columns expanded (once) when a term needs their values.
type selection struct {
	mem    memory.Allocator
	rec    arrow.RecordBatch
	source *arrow.Schema
	plain  map[int]arrow.Array // expanded dictionary columns, by index
}

func (s *selection) release() {
	for _, a := range s.plain {
		a.Release()
	}
}

func (s *selection) isDict(col string) bool {
	idx := s.rec.Schema().FieldIndices(col)
	return len(idx) == 1 && s.encoded(idx[0])
}

// encoded reports whether column i of the batch is a dictionary the scan
// made of a column the source types otherwise (a column typed as a
// dictionary is evaluated as it is).
func (s *selection) encoded(i int) bool {
	if _, ok := s.rec.Column(i).(*array.Dictionary); !ok {
		return false
	}
	src := s.source.FieldIndices(s.rec.Schema().Field(i).Name)
	return len(src) == 1 && s.source.Field(src[0]).Type.ID() != arrow.DICTIONARY
}

// columns resolves the top-level columns a term reads to their indices.
func (s *selection) columns(inputs []string) ([]int, error) {
	var out []int
	seen := map[int]bool{}
	for _, in := range inputs {
		name := rootOf(s.rec.Schema(), in)
		idx := s.rec.Schema().FieldIndices(name)
		if len(idx) != 1 {
			return nil, fmt.Errorf("view filter: batch has no single column %q", name)
		}
		if !seen[idx[0]] {
			seen[idx[0]] = true
			out = append(out, idx[0])
		}
	}
	return out, nil
}

// batch returns the term's input columns at rows (every row when rows is
// nil), dictionaries expanded.
func (s *selection) batch(inputs []string, rows []int) (arrow.RecordBatch, error) {
	idx, err := s.columns(inputs)
	if err != nil {
		return nil, err
	}
	var ia arrow.Array
	if rows != nil {
		b := array.NewInt32Builder(s.mem)
		b.Reserve(len(rows))
		for _, r := range rows {
			b.UnsafeAppend(int32(r))
		}
		ia = b.NewArray()
		b.Release()
		defer ia.Release()
	}
	fields := make([]arrow.Field, len(idx))
	cols := make([]arrow.Array, len(idx))
	defer releaseAll(cols)
	for k, i := range idx {
		a := s.rec.Column(i)
		var err error
		if d, ok := a.(*array.Dictionary); ok && s.encoded(i) {
			if rows == nil {
				if s.plain[i] == nil {
					v, err := take(s.mem, d.Dictionary(), d.Indices())
					if err != nil {
						return nil, err
					}
					if s.plain == nil {
						s.plain = map[int]arrow.Array{}
					}
					s.plain[i] = v
				}
				a = s.plain[i]
				a.Retain()
			} else {
				codes, err := take(s.mem, d.Indices(), ia)
				if err != nil {
					return nil, err
				}
				a, err = take(s.mem, d.Dictionary(), codes)
				codes.Release()
				if err != nil {
					return nil, err
				}
			}
		} else if rows == nil {
			a.Retain()
		} else if a, err = take(s.mem, a, ia); err != nil {
			return nil, err
		}
		fields[k] = s.rec.Schema().Field(i)
		fields[k].Type = a.DataType()
		cols[k] = a
	}
	n := s.rec.NumRows()
	if rows != nil {
		n = int64(len(rows))
	}
	return array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, n), nil
}

// rows evaluates term c over the rows (all of them, or only those of sel
// when subset) and returns sel narrowed to the rows where it is TRUE.
func (s *selection) rows(c *sqlexpr.Compiled, sel []int, subset bool) ([]int, error) {
	var only []int // the rows evaluated: nil for all of them
	if subset && sel != nil {
		if len(sel) == 0 {
			return sel, nil
		}
		only = sel
	}
	rec, err := s.batch(c.Inputs(), only)
	if err != nil {
		return nil, err
	}
	defer rec.Release()
	keep, err := c.Selection(s.mem, rec)
	if err != nil {
		return nil, fmt.Errorf("view filter: %w", err)
	}
	if only == nil {
		return intersect(sel, keep), nil
	}
	out := sel[:0]
	for _, k := range keep {
		out = append(out, sel[k])
	}
	return out, nil
}

// items evaluates a term over the dictionary items of its one column and
// maps the answers to the rows; a term failing on some item (which no row
// may hold) is evaluated on the rows instead.
func (s *selection) items(t conjunct, sel []int) ([]int, error) {
	idx := s.rec.Schema().FieldIndices(t.col)[0]
	d := s.rec.Column(idx).(*array.Dictionary)
	codes, ok := d.Indices().(*array.Int32)
	if !ok || codes.NullN() > 0 {
		return s.rows(t.c, sel, false)
	}
	vals := d.Dictionary()
	f := s.rec.Schema().Field(idx)
	f.Type = vals.DataType()
	vrec := array.NewRecordBatch(arrow.NewSchema([]arrow.Field{f}, nil), []arrow.Array{vals}, int64(vals.Len()))
	defer vrec.Release()
	keep, err := t.c.Selection(s.mem, vrec)
	if err != nil {
		return s.rows(t.c, sel, false)
	}
	// 1 per item the term holds for: rows are kept without a branch.
	truth := make([]int, vals.Len())
	for _, k := range keep {
		truth[k] = 1
	}
	cv := codes.Int32Values()
	if sel == nil {
		if len(keep) == 0 {
			return []int{}, nil
		}
		kept := 0
		for _, k := range cv {
			kept += truth[k]
		}
		out := make([]int, kept+1) // one spare: the write ahead of a skip
		n := 0
		for i, k := range cv {
			out[n] = i
			n += truth[k]
		}
		return out[:n], nil
	}
	n := 0
	for _, i := range sel {
		sel[n] = i
		n += truth[cv[i]]
	}
	return sel[:n], nil
}

// intersect returns the ascending indices in both a (nil: every index) and b.
func intersect(a, b []int) []int {
	if a == nil {
		return b
	}
	out := a[:0]
	j := 0
	for _, x := range a {
		for j < len(b) && b[j] < x {
			j++
		}
		if j < len(b) && b[j] == x {
			out = append(out, x)
		}
	}
	return out
}

// take is Arrow's take of values at indices.
func take(mem memory.Allocator, values, indices arrow.Array) (arrow.Array, error) {
	ctx := compute.WithAllocator(context.Background(), mem)
	out, err := compute.TakeArray(ctx, values, indices)
	if err != nil {
		return nil, fmt.Errorf("view filter: gather rows: %w", err)
	}
	return out, nil
}

// ApplySelected is Apply for a batch that holds only rows the filter keeps
// (a scan filtered by Select): it projects without filtering again.
func (p *Plan) ApplySelected(mem memory.Allocator, rec arrow.RecordBatch) (arrow.RecordBatch, error) {
	ids := rec.Schema().FieldIndices(RowID)
	if len(ids) == 0 {
		return nil, fmt.Errorf("plan: source batch has no %s column", RowID)
	}
	cols, err := p.project(mem, rec)
	if err != nil {
		return nil, err
	}
	rid := rec.Column(ids[0])
	rid.Retain()
	cols = append(cols, rid)
	defer releaseAll(cols)
	return array.NewRecordBatch(p.schema, cols, rec.NumRows()), nil
}
