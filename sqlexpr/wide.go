package sqlexpr

import (
	"fmt"
	"math/big"

	"github.com/apache/arrow-go/v18/arrow"
)

// Arithmetic between a signed and an unsigned 64-bit integer has no
// integer result type: DataFusion computes it in Decimal128(20+, 0), so
// `u64 + 1 > 0` or `_rowid % 2 = 0` (nested below the top, where Lance's
// literal rule does not reach) compare exact integers. sqlexpr computes
// such sums, differences, products and remainders exactly (big.Int
// values of type tWide) and lets only comparisons, and further such
// arithmetic, read them: it has no decimal columns to produce, so a wide
// value anywhere else is refused. Division, which DataFusion carries out
// with decimal digits, is refused too.

// tWide is the type of exact integer values.
var tWide = &arrow.Decimal128Type{Precision: 38, Scale: 0}

func isWide(t arrow.DataType) bool {
	d, ok := t.(*arrow.Decimal128Type)
	return ok && d == tWide
}

// wideOperands reports an arithmetic or comparison whose operands need
// exact integers: a signed and an unsigned integer without a common
// integer type, or a wide value with an integer.
func wideOperands(l, r *node, rule bool) bool {
	switch {
	case isWide(l.typ) || isWide(r.typ):
		return (isWide(l.typ) || isInteger(l.typ) || isNull(l.typ)) && (isWide(r.typ) || isInteger(r.typ) || isNull(r.typ))
	}
	return mixedSignedness(l, r, rule)
}

func toBig(v any) *big.Int {
	switch x := v.(type) {
	case int64:
		return big.NewInt(x)
	case uint64:
		return new(big.Int).SetUint64(x)
	case *big.Int:
		return x
	}
	return nil
}

// wideArith is l op r on exact integers.
func wideArith(op string, l, r *node, at int) (*node, error) {
	if op == "/" {
		return nil, errAt(ErrType, at, "dividing a %s by a %s is decimal division in DataFusion, which sqlexpr does not do; cast both to DOUBLE or to BIGINT", l.typ, r.typ)
	}
	n := call("wide"+op, tWide, func(a []any) (any, error) {
		x, y := toBig(a[0]), toBig(a[1])
		z := new(big.Int)
		switch op {
		case "+":
			z.Add(x, y)
		case "-":
			z.Sub(x, y)
		case "*":
			z.Mul(x, y)
		case "%":
			if y.Sign() == 0 {
				return nil, errDivZero
			}
			z.Rem(x, y) // truncated, as Rust's %
		}
		return z, nil
	}, l, r)
	return n, nil
}

// wideCompare is l op r on exact integers.
func wideCompare(op string, l, r *node) *node {
	return call("wide_cmp", tBool, func(a []any) (any, error) {
		return cmpOp(op, toBig(a[0]).Cmp(toBig(a[1]))), nil
	}, l, r)
}

// checkWide refuses a wide value read by anything but a comparison or
// wide arithmetic, or produced as the result.
func checkWide(root *node, at int) error {
	if isWide(root.typ) {
		return errAt(ErrType, at, "arithmetic mixing signed and unsigned 64-bit integers gives a Decimal128 in DataFusion, which sqlexpr does not produce; cast one side (CAST(x AS BIGINT))")
	}
	var err error
	var walk func(n *node)
	walk = func(n *node) {
		for _, a := range n.args {
			if err != nil {
				return
			}
			if isWide(a.typ) && n.op != "wide_cmp" && !isWide(n.typ) {
				err = errAt(ErrType, at, "a mix of signed and unsigned 64-bit integers (a Decimal128 in DataFusion) can only be compared here, not used by %s", describeOp(n))
				return
			}
			walk(a)
		}
	}
	walk(root)
	return err
}

func describeOp(n *node) string {
	if n.op != "" {
		return n.op
	}
	return fmt.Sprintf("a %s expression", n.typ)
}
