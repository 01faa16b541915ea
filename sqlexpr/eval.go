package sqlexpr

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/file"
	"github.com/expr-lang/expr/vm"
)

// program is the evaluation plan of a compiled expression: which nodes
// run as vectorized kernels and, for the rest, expr-lang programs that
// compute one row at a time.
type program struct {
	regions map[*node]*region
	// rowOnly disables the kernels; tests and benchmarks use it to check
	// and time the row path alone.
	rowOnly bool
}

// region is a maximal subtree evaluated row by row. Its frontier nodes
// (columns and vectorized subtrees) are evaluated to arrays first and
// read into the env as x0, x1, …; constants are k0, k1, ….
type region struct {
	prog     *vm.Program
	frontier []*node
	consts   map[string]any
}

// buildProgram decides the evaluation strategy of every node under root.
func buildProgram(root *node, rowOnly bool) (*program, error) {
	p := &program{regions: map[*node]*region{}, rowOnly: rowOnly}
	if err := p.plan(root); err != nil {
		return nil, err
	}
	return p, nil
}

// plan visits n: vectorized nodes recurse into their children; any other
// call starts a region.
func (p *program) plan(n *node) error {
	switch {
	case n.kind == kLit || (n.kind == kCol && len(n.path) == 0):
		return nil
	case p.vectorized(n):
		for _, a := range n.args {
			if err := p.plan(a); err != nil {
				return err
			}
		}
		return nil
	}
	r, err := p.newRegion(n)
	if err != nil {
		return err
	}
	p.regions[n] = r
	return nil
}

func (p *program) newRegion(root *node) (*region, error) {
	r := &region{consts: map[string]any{}}
	var opts []expr.Option
	var fnCount int
	var walk func(n *node, top, lazy bool) (string, error)
	walk = func(n *node, top, lazy bool) (string, error) {
		switch {
		case n.kind == kLit:
			name := "k" + strconv.Itoa(len(r.consts))
			r.consts[name] = n.val
			return name, nil
		case n.kind == kCol && len(n.path) == 0, !top && !lazy && p.vectorized(n):
			if err := p.plan(n); err != nil {
				return "", err
			}
			r.frontier = append(r.frontier, n)
			return "x" + strconv.Itoa(len(r.frontier)-1), nil
		case n.kind == kCol:
			// A nested field: read the top-level struct, then walk down.
			top := &node{kind: kCol, col: n.col, nullable: true}
			r.frontier = append(r.frontier, top)
			arg := "x" + strconv.Itoa(len(r.frontier)-1)
			name := "f" + strconv.Itoa(fnCount)
			fnCount++
			path := n.path
			opts = append(opts, expr.Function(name, func(a ...any) (any, error) {
				v := a[0]
				for _, k := range path {
					sv, ok := v.(structVal)
					if !ok {
						return nil, nil
					}
					v = sv[k]
				}
				return v, nil
			}))
			return name + "(" + arg + ")", nil
		case n.kind == kCase:
			var b strings.Builder
			closing := 0
			for i := 0; i+1 < len(n.args); i += 2 {
				// Only the first condition runs for every row; later
				// conditions and all values must stay lazy (a kernel
				// would evaluate them for every row, errors included).
				c, err := walk(n.args[i], false, lazy || i > 0)
				if err != nil {
					return "", err
				}
				v, err := walk(n.args[i+1], false, true)
				if err != nil {
					return "", err
				}
				fmt.Fprintf(&b, "(isTrue(%s) ? %s : ", c, v)
				closing++
			}
			e, err := walk(n.args[len(n.args)-1], false, true)
			if err != nil {
				return "", err
			}
			b.WriteString(e)
			b.WriteString(strings.Repeat(")", closing))
			return b.String(), nil
		}
		args := make([]string, len(n.args))
		for i, a := range n.args {
			s, err := walk(a, false, lazy)
			if err != nil {
				return "", err
			}
			args[i] = s
		}
		name := "f" + strconv.Itoa(fnCount)
		fnCount++
		fn, strict := n.fn, n.strict
		opts = append(opts, expr.Function(name, func(a ...any) (any, error) {
			if strict {
				for _, v := range a {
					if v == nil {
						return nil, nil
					}
				}
			}
			return fn(a)
		}))
		return name + "(" + strings.Join(args, ", ") + ")", nil
	}
	src, err := walk(root, true, false)
	if err != nil {
		return nil, err
	}
	opts = append(opts, expr.Function("isTrue", func(a ...any) (any, error) { return a[0] == true, nil }))
	// Declaring the env as map[string]any lets expr-lang read variables
	// with a plain map lookup instead of reflection.
	env := map[string]any{}
	for k, v := range r.consts {
		env[k] = v
	}
	for i := range r.frontier {
		env["x"+strconv.Itoa(i)] = nil
	}
	opts = append(opts, expr.Env(env))
	// The program grows with the expression (a CASE of thousands of
	// branches); the source text already bounds it.
	opts = append(opts, expr.MaxNodes(maxProgramNodes))
	prog, err := expr.Compile(src, opts...)
	if err != nil {
		// Never show the generated program: it is no text of the user's.
		return nil, fmt.Errorf("%w: expression too complex to evaluate row by row (%s)", ErrUnsupported, exprMessage(err))
	}
	r.prog = prog
	return r, nil
}

// vectorized reports whether n runs as a kernel in this program.
func (p *program) vectorized(n *node) bool { return !p.rowOnly && vectorizable(n) }

// Eval computes the expression for every row of rec, allocating from the
// default allocator. The caller releases the result.
func (c *Compiled) Eval(rec arrow.RecordBatch) (arrow.Array, error) {
	return c.EvalWith(memory.DefaultAllocator, rec)
}

// EvalWith is Eval allocating from mem. Columns are found in rec by name,
// so rec may hold just the expression's inputs, in any order; each must
// have the type it had in the compiled schema.
func (c *Compiled) EvalWith(mem memory.Allocator, rec arrow.RecordBatch) (arrow.Array, error) {
	cols, err := c.bind(rec.Schema())
	if err != nil {
		return nil, err
	}
	ev := &evaluator{mem: mem, rec: rec, prog: c.prog, cols: cols}
	return ev.eval(c.root)
}

// bind maps each compiled column index the expression reads to its index
// in s.
func (c *Compiled) bind(s *arrow.Schema) (map[int]int, error) {
	cols := make(map[int]int, len(c.usedCols))
	for _, i := range c.usedCols {
		f := c.schema.Field(i)
		if i < s.NumFields() && s.Field(i).Name == f.Name && arrow.TypeEqual(s.Field(i).Type, f.Type) {
			cols[i] = i // the common case: the same schema
			continue
		}
		idx := s.FieldIndices(f.Name)
		if len(idx) != 1 {
			return nil, fmt.Errorf("%w: record batch has no single column %q", ErrUnknownColumn, f.Name)
		}
		if !arrow.TypeEqual(s.Field(idx[0]).Type, f.Type) {
			return nil, fmt.Errorf("%w: column %q is %s in the record batch, %s when compiled", ErrType, f.Name, s.Field(idx[0]).Type, f.Type)
		}
		cols[i] = idx[0]
	}
	return cols, nil
}

// evaluator holds the state of one Eval call.
type evaluator struct {
	mem  memory.Allocator
	rec  arrow.RecordBatch
	prog *program
	cols map[int]int // compiled column index -> record column index
	vm   vm.VM
}

func (ev *evaluator) rows() int { return int(ev.rec.NumRows()) }

// eval returns n's values for every row as a new reference.
func (ev *evaluator) eval(n *node) (arrow.Array, error) {
	switch {
	case n.kind == kCol && len(n.path) == 0:
		col := ev.rec.Column(ev.cols[n.col])
		if n.dict {
			return decodeDictionary(ev.mem, col)
		}
		col.Retain()
		return col, nil
	case n.kind == kLit:
		return constArray(ev.mem, n.typ, n.val, ev.rows())
	}
	if r, ok := ev.prog.regions[n]; ok {
		return ev.runRegion(n, r)
	}
	return ev.vector(n)
}

// runRegion evaluates a row-by-row region.
func (ev *evaluator) runRegion(n *node, r *region) (arrow.Array, error) {
	getters := make([]func(int) any, len(r.frontier))
	for i, f := range r.frontier {
		arr, err := ev.eval(f)
		if err != nil {
			return nil, err
		}
		defer arr.Release()
		if getters[i], err = getter(arr); err != nil {
			return nil, err
		}
	}
	env := make(map[string]any, len(r.consts)+len(getters))
	for k, v := range r.consts {
		env[k] = v
	}
	names := make([]string, len(getters))
	for i := range names {
		names[i] = "x" + strconv.Itoa(i)
	}
	b := array.NewBuilder(ev.mem, n.typ)
	defer b.Release()
	rows := ev.rows()
	b.Reserve(rows)
	for row := 0; row < rows; row++ {
		for i, g := range getters {
			env[names[i]] = g(row)
		}
		out, err := ev.vm.Run(r.prog, env)
		if err != nil {
			return nil, rowError(row, err)
		}
		if err := appendValue(b, out); err != nil {
			return nil, err
		}
	}
	return b.NewArray(), nil
}

// constArray repeats v n times.
func constArray(mem memory.Allocator, t arrow.DataType, v any, n int) (arrow.Array, error) {
	if t.ID() == arrow.NULL {
		return array.MakeArrayOfNull(mem, t, n), nil
	}
	b := array.NewBuilder(mem, t)
	defer b.Release()
	b.Reserve(n)
	for i := 0; i < n; i++ {
		if err := appendValue(b, v); err != nil {
			return nil, err
		}
	}
	return b.NewArray(), nil
}

// maxProgramNodes bounds the row program expr-lang compiles.
const maxProgramNodes = 1 << 22

// exprMessage is an expr-lang error's message without the snippet of the
// generated program it appends.
func exprMessage(err error) string {
	var fe *file.Error
	if errors.As(err, &fe) {
		return fe.Message
	}
	msg, _, _ := strings.Cut(err.Error(), "\n")
	return msg
}

// rowError reports a failure of the row program at row: the error of the
// function that failed when there is one, never expr-lang's echo of the
// generated program.
func rowError(row int, err error) error {
	var fe *file.Error
	if errors.As(err, &fe) && fe.Prev != nil {
		err = fe.Prev
	}
	for _, kind := range []error{ErrSyntax, ErrUnknownColumn, ErrType, ErrUnsupported, ErrEval} {
		if errors.Is(err, kind) {
			return fmt.Errorf("%w (row %d)", err, row)
		}
	}
	return fmt.Errorf("%w: %s (row %d)", ErrEval, exprMessage(err), row)
}

// decodeDictionary returns the values of a dictionary-encoded array, one
// per row (NULL where the index is NULL).
func decodeDictionary(mem memory.Allocator, col arrow.Array) (arrow.Array, error) {
	d, ok := col.(*array.Dictionary)
	if !ok {
		return nil, fmt.Errorf("%w: expected a dictionary column, got %s", ErrType, col.DataType())
	}
	ctx := compute.WithAllocator(context.Background(), mem)
	out, err := compute.TakeArray(ctx, d.Dictionary(), d.Indices())
	if err != nil {
		return nil, fmt.Errorf("%w: decoding a dictionary column: %w", ErrEval, err)
	}
	return out, nil
}
