package sqlexpr

import (
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
)

// funcSpec type-checks a call of one function and returns its node.
type funcSpec func(at int, args []*node) (*node, error)

// volatile lists functions whose value changes between evaluations: a
// view must be reproducible, so they are refused (as LanceDB does).
func volatile(name string) bool {
	switch name {
	case "random", "now", "current_date", "current_time", "current_timestamp", "uuid",
		"version", "arrow_typeof", "arrow_metadata", "localtime", "localtimestamp":
		return true
	}
	return false
}

// aggregate reports an aggregate or window function, refused: a projection computes one value per row.
func aggregate(name string) bool {
	switch name {
	case "count", "sum", "avg", "min", "max", "array_agg", "string_agg", "stddev",
		"variance", "median", "first_value", "last_value", "row_number", "rank":
		return true
	}
	return false
}

func (ck *checker) call(e *Call) (*node, error) {
	switch {
	case volatile(e.Name):
		return nil, errAt(ErrUnsupported, e.At, "volatile function %s() is not allowed: a view must be reproducible", e.Name)
	case aggregate(e.Name):
		return nil, errAt(ErrUnsupported, e.At, "aggregate function %s() is not allowed in a view projection or filter", e.Name)
	case e.Star:
		return nil, errAt(ErrUnsupported, e.At, "%s(*) is not supported", e.Name)
	}
	spec := lookupFunc(e.Name)
	if spec == nil {
		return nil, errAt(ErrUnsupported, e.At, "unknown function %s()", e.Name)
	}
	args, err := ck.checkAll(listArgs(e.Args))
	if err != nil {
		return nil, err
	}
	return spec(e.At, args)
}

// listArgs reads a list literal passed to a function as make_array, as
// DataFusion plans it there (any expressions, coerced to a common type,
// possibly empty); elsewhere Lance wants a list of literals of one type.
func listArgs(args []Expr) []Expr {
	var out []Expr
	for i, a := range args {
		arr, ok := a.(*Array)
		if !ok {
			continue
		}
		if out == nil {
			out = append([]Expr(nil), args...)
		}
		out[i] = &Call{At: arr.At, Name: "make_array", Args: listArgs(arr.Elems)}
	}
	if out == nil {
		return args
	}
	return out
}

// lookupFunc finds a function by lower-case name. The registry is built
// per call (cheap) so the package keeps no mutable state.
func lookupFunc(name string) funcSpec {
	if f, ok := stringFuncs()[name]; ok {
		return f
	}
	if f, ok := mathFuncs()[name]; ok {
		return f
	}
	if f, ok := otherFuncs()[name]; ok {
		return f
	}
	if f, ok := extraFuncs()[name]; ok {
		return f
	}
	if f, ok := timeFuncs()[name]; ok {
		return f
	}
	return nil
}

// arity checks the argument count.
func arity(name string, at int, args []*node, min, max int) error {
	if len(args) < min || (max >= 0 && len(args) > max) {
		var want string
		switch {
		case min == max:
			want = itoa(min)
		case max < 0:
			want = "at least " + itoa(min)
		default:
			want = itoa(min) + " to " + itoa(max)
		}
		return errAt(ErrType, at, "%s() takes %s arguments, got %d", name, want, len(args))
	}
	return nil
}

// fixedCall coerces args to the given types and builds a strict call.
func fixedCall(name string, at int, args []*node, types []arrow.DataType, ret arrow.DataType, fn func([]any) (any, error)) (*node, error) {
	if err := arity(name, at, args, len(types), len(types)); err != nil {
		return nil, err
	}
	out := make([]*node, len(args))
	for i, a := range args {
		if !coercible(a.typ, types[i]) && !(lenientString(name) && isString(types[i]) && castsToString(a.typ)) {
			return nil, errAt(ErrType, at, "%s() argument %d must be %s, got %s", name, i+1, types[i], a.typ)
		}
		c, err := coerceTo(a, types[i])
		if err != nil {
			return nil, errAt(ErrType, at, "%s(): %v", name, err)
		}
		out[i] = c
	}
	n := call(name, ret, fn, out...)
	n.nullable = true // DataFusion assumes any function may return NULL
	return n, nil
}

// coercible reports whether a function argument of type from may be
// implicitly converted to to (DataFusion's signature coercion: strings
// only from strings, so upper(i32) is refused as in LanceDB).
func coercible(from, to arrow.DataType) bool {
	switch {
	case arrow.TypeEqual(from, to), isNull(from):
		return true
	case isNumeric(to):
		return isNumeric(from)
	case isString(to):
		return isString(from)
	case isTemporal(to):
		return isTemporal(from) || isString(from)
	case to.ID() == arrow.BINARY:
		return isString(from) || from.ID() == arrow.BINARY
	}
	return false
}

func itoa(i int) string { return strconv.Itoa(i) }

// lenientString lists the functions whose string arguments DataFusion
// also takes from numbers, dates and timestamps (cast to text), as
// LanceDB 0.39 shows: reverse(i32) and length(d) work, upper(i32) does
// not.
func lenientString(name string) bool {
	switch name {
	case "reverse", "lpad", "rpad", "translate", "length", "char_length", "character_length":
		return true
	}
	return false
}

// castsToString reports types with a text form for lenient functions.
func castsToString(t arrow.DataType) bool {
	return isString(t) || isNumeric(t) || isTemporal(t) || isNull(t)
}
