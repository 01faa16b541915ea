package sqlexpr

import (
	"github.com/apache/arrow-go/v18/arrow"
)

// nodeKind classifies a typed node.
type nodeKind int

const (
	kCol  nodeKind = iota // a source column or nested field
	kLit                  // a constant
	kCall                 // an operator or function applied to args
	kCase                 // CASE: args are cond, value pairs then else
)

// node is a type-checked expression. Every operand already has the type
// its operator expects: coercions are explicit cast nodes.
type node struct {
	kind     nodeKind
	typ      arrow.DataType
	nullable bool
	args     []*node

	// kCol: top-level column index, struct field indices below it, and
	// the dotted name reported in Inputs.
	col      int
	path     []int
	ref      string
	refParts []string // the field names along the path
	// dict marks a dictionary-encoded column read as its values.
	dict bool

	// kLit: the constant as a row value.
	val any

	// kCall: op names the operation for the vectorized kernels; fn
	// computes one row. When strict, a NULL argument gives NULL without
	// calling fn.
	op     string
	fn     func(args []any) (any, error)
	strict bool
	// aux carries what a kernel needs beyond the arguments (the compiled
	// pattern of a LIKE, the negation of an IN).
	aux any

	// isLitSrc marks a node that came straight from a literal in the
	// source text (also through unary minus), which Lance coerces to the
	// type of the column it is compared or combined with.
	isLitSrc bool
}

func litNode(v any, t arrow.DataType) *node {
	return &node{kind: kLit, typ: t, val: v, nullable: v == nil}
}

// call builds a strict operator node whose nullability follows its
// arguments.
func call(op string, t arrow.DataType, fn func([]any) (any, error), args ...*node) *node {
	n := &node{kind: kCall, typ: t, op: op, fn: fn, strict: true, args: args}
	for _, a := range args {
		n.nullable = n.nullable || a.nullable
	}
	return n
}
