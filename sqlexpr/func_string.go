package sqlexpr

import (
	"crypto/md5"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
)

// strOf is the string type a string function returns for argument a:
// LargeUtf8 stays LargeUtf8, everything else gives Utf8.
func strOf(a *node) arrow.DataType {
	if a.typ.ID() == arrow.LARGE_STRING {
		return a.typ
	}
	return tUtf8
}

// str1 is a one-string-argument function returning a string.
func str1(name string, f func(string) string) funcSpec {
	return func(at int, args []*node) (*node, error) {
		if err := arity(name, at, args, 1, 1); err != nil {
			return nil, err
		}
		t := strOf(args[0])
		return fixedCall(name, at, args, []arrow.DataType{t}, t, func(a []any) (any, error) { return f(a[0].(string)), nil })
	}
}

// strN is a function of fixed argument types.
func strN(name string, types []arrow.DataType, ret arrow.DataType, f func([]any) (any, error)) funcSpec {
	return func(at int, args []*node) (*node, error) {
		return fixedCall(name, at, args, types, ret, f)
	}
}

// optional accepts min..len(types) arguments, checking each like strN.
func optional(name string, min int, types []arrow.DataType, ret arrow.DataType, f func([]any) (any, error)) funcSpec {
	return func(at int, args []*node) (*node, error) {
		if err := arity(name, at, args, min, len(types)); err != nil {
			return nil, err
		}
		return fixedCall(name, at, args, types[:len(args)], ret, f)
	}
}

// types is shorthand for an argument type list.
func types(ts ...arrow.DataType) []arrow.DataType { return ts }

func stringFuncs() map[string]funcSpec {
	length := func(name string, f func(string) int64) funcSpec {
		return func(at int, args []*node) (*node, error) {
			if err := arity(name, at, args, 1, 1); err != nil {
				return nil, err
			}
			ret := tInt32
			if args[0].typ.ID() == arrow.LARGE_STRING {
				ret = tInt64
			}
			if !castsToString(args[0].typ) || (name == "octet_length" && !isString(args[0].typ) && !isNull(args[0].typ)) {
				return nil, errAt(ErrType, at, "%s() needs a string, got %s", name, args[0].typ)
			}
			return fixedCall(name, at, args, []arrow.DataType{strOf(args[0])}, ret, func(a []any) (any, error) { return f(a[0].(string)), nil })
		}
	}
	charLen := length("char_length", func(s string) int64 { return int64(utf8.RuneCountInString(s)) })
	trim := func(name string, left, right bool) funcSpec {
		return optional(name, 1, types(tUtf8, tUtf8), tUtf8, func(a []any) (any, error) {
			cut := " "
			if len(a) > 1 {
				cut = a[1].(string)
			}
			s := a[0].(string)
			if left {
				s = strings.TrimLeft(s, cut)
			}
			if right {
				s = strings.TrimRight(s, cut)
			}
			return s, nil
		})
	}
	return map[string]funcSpec{
		"upper":            str1("upper", sqlUpper),
		"lower":            str1("lower", sqlLower),
		"reverse":          str1("reverse", reverseString),
		"initcap":          str1("initcap", initcap),
		"length":           charLen,
		"char_length":      charLen,
		"character_length": charLen,
		"octet_length":     length("octet_length", func(s string) int64 { return int64(len(s)) }),
		"btrim":            trim("btrim", true, true),
		"trim":             trim("trim", true, true),
		"ltrim":            trim("ltrim", true, false),
		"rtrim":            trim("rtrim", false, true),
		"concat":           concatFunc,
		"concat_ws":        concatWsFunc,
		"replace": strN("replace", types(tUtf8, tUtf8, tUtf8), tUtf8, func(a []any) (any, error) {
			return strings.ReplaceAll(a[0].(string), a[1].(string), a[2].(string)), nil
		}),
		"lpad": optional("lpad", 2, []arrow.DataType{tUtf8, tInt64, tUtf8}, tUtf8, func(a []any) (any, error) { return pad(a, true) }),
		"rpad": optional("rpad", 2, []arrow.DataType{tUtf8, tInt64, tUtf8}, tUtf8, func(a []any) (any, error) { return pad(a, false) }),
		"split_part": strN("split_part", []arrow.DataType{tUtf8, tUtf8, tInt64}, tUtf8, func(a []any) (any, error) {
			s, sep, n := a[0].(string), a[1].(string), a[2].(int64)
			if n == 0 {
				return nil, fmt.Errorf("%w: split_part field position must not be zero", ErrEval)
			}
			parts := strings.Split(s, sep)
			if n < 0 {
				n += int64(len(parts)) + 1
			}
			if n < 1 || n > int64(len(parts)) {
				return "", nil
			}
			return parts[n-1], nil
		}),
		"ascii": strN("ascii", []arrow.DataType{tUtf8}, tInt32, func(a []any) (any, error) {
			r, _ := utf8.DecodeRuneInString(a[0].(string))
			if r == utf8.RuneError {
				return int64(0), nil
			}
			return int64(r), nil
		}),
		"to_hex": func(at int, args []*node) (*node, error) {
			if err := arity("to_hex", at, args, 1, 1); err != nil {
				return nil, err
			}
			if !isInteger(args[0].typ) && !isNull(args[0].typ) {
				return nil, errAt(ErrType, at, "to_hex() needs an integer, got %s", args[0].typ)
			}
			t := args[0].typ
			return call("to_hex", tUtf8, func(a []any) (any, error) {
				switch v := a[0].(type) {
				case int64:
					return strconv.FormatUint(uint64(v), 16), nil
				case uint64:
					return strconv.FormatUint(v, 16), nil
				}
				return nil, fmt.Errorf("%w: to_hex of %s", ErrType, t)
			}, args[0]), nil
		},
		"starts_with": strN("starts_with", types(tUtf8, tUtf8), tBool, func(a []any) (any, error) { return strings.HasPrefix(a[0].(string), a[1].(string)), nil }),
		"ends_with":   strN("ends_with", types(tUtf8, tUtf8), tBool, func(a []any) (any, error) { return strings.HasSuffix(a[0].(string), a[1].(string)), nil }),
		"strpos": strN("strpos", types(tUtf8, tUtf8), tInt32, func(a []any) (any, error) {
			s, sub := a[0].(string), a[1].(string)
			i := strings.Index(s, sub)
			if i < 0 {
				return int64(0), nil
			}
			return int64(utf8.RuneCountInString(s[:i]) + 1), nil
		}),
		"repeat": strN("repeat", types(tUtf8, tInt64), tUtf8, func(a []any) (any, error) {
			n := a[1].(int64)
			if n <= 0 {
				return "", nil
			}
			if n > 1<<24 || n*int64(len(a[0].(string))) > 1<<24 {
				return nil, fmt.Errorf("%w: repeat result too large", ErrEval)
			}
			return strings.Repeat(a[0].(string), int(n)), nil
		}),
		"translate": strN("translate", types(tUtf8, tUtf8, tUtf8), tUtf8, func(a []any) (any, error) { return translate(a[0].(string), a[1].(string), a[2].(string)), nil }),
		"left": strN("left", types(tUtf8, tInt64), tUtf8, func(a []any) (any, error) {
			r, n := []rune(a[0].(string)), a[1].(int64)
			if n < 0 {
				n += int64(len(r))
			}
			return string(r[:clamp(n, 0, int64(len(r)))]), nil
		}),
		"right": strN("right", types(tUtf8, tInt64), tUtf8, func(a []any) (any, error) {
			r, n := []rune(a[0].(string)), a[1].(int64)
			if n < 0 {
				n += int64(len(r))
			}
			return string(r[int64(len(r))-clamp(n, 0, int64(len(r))):]), nil
		}),
		"substr":         substrFunc,
		"regexp_replace": regexpReplaceFunc,
		"regexp_like": optional("regexp_like", 2, types(tUtf8, tUtf8, tUtf8), tBool, func(a []any) (any, error) {
			re, err := sqlRegexp(a[1].(string), a, 2)
			if err != nil {
				return nil, err
			}
			return re.MatchString(a[0].(string)), nil
		}),
		"regexp_match": optional("regexp_match", 2, types(tUtf8, tUtf8, tUtf8), arrow.ListOf(tUtf8), func(a []any) (any, error) {
			re, err := sqlRegexp(a[1].(string), a, 2)
			if err != nil {
				return nil, err
			}
			m := re.FindStringSubmatch(a[0].(string))
			if m == nil {
				return nil, nil
			}
			if len(m) > 1 {
				m = m[1:]
			}
			out := make([]any, len(m))
			for i, s := range m {
				out[i] = s
			}
			return out, nil
		}),
		"md5": strN("md5", []arrow.DataType{tUtf8}, tUtf8, func(a []any) (any, error) {
			h := md5.Sum([]byte(a[0].(string)))
			return hex.EncodeToString(h[:]), nil
		}),
		"sha256": strN("sha256", []arrow.DataType{tUtf8}, tBinary, func(a []any) (any, error) {
			h := sha256.Sum256([]byte(a[0].(string)))
			return h[:], nil
		}),
		"sha512": strN("sha512", []arrow.DataType{tUtf8}, tBinary, func(a []any) (any, error) {
			h := sha512.Sum512([]byte(a[0].(string)))
			return h[:], nil
		}),
		"digest": strN("digest", types(tUtf8, tUtf8), tBinary, func(a []any) (any, error) { return digest(a[0].(string), a[1].(string)) }),
	}
}

func clamp(v, lo, hi int64) int64 { return max(lo, min(v, hi)) }

func reverseString(s string) string {
	r := []rune(s)
	for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
		r[i], r[j] = r[j], r[i]
	}
	return string(r)
}

// initcap upper-cases the first letter of each alphanumeric word and
// lower-cases the rest.
func initcap(s string) string {
	var b strings.Builder
	start := true
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if start {
				b.WriteString(sqlUpper(string(r)))
			} else {
				b.WriteString(sqlLower(string(r)))
			}
			start = false
			continue
		}
		b.WriteRune(r)
		start = true
	}
	return b.String()
}

// pad implements lpad/rpad counting characters; a longer input is
// truncated to the target length.
func pad(a []any, left bool) (any, error) {
	s, n := []rune(a[0].(string)), a[1].(int64)
	fill := []rune(" ")
	if len(a) > 2 {
		fill = []rune(a[2].(string))
	}
	if n <= 0 {
		return "", nil
	}
	if n > 1<<22 {
		return nil, fmt.Errorf("%w: pad length %d too large", ErrEval, n)
	}
	if int64(len(s)) >= n {
		return string(s[:n]), nil
	}
	if len(fill) == 0 {
		return string(s), nil
	}
	need := int(n) - len(s)
	p := make([]rune, 0, need)
	for i := 0; len(p) < need; i++ {
		p = append(p, fill[i%len(fill)])
	}
	if left {
		return string(p) + string(s), nil
	}
	return string(s) + string(p), nil
}

func translate(s, from, to string) string {
	f, t := []rune(from), []rune(to)
	var b strings.Builder
	for _, r := range s {
		idx := -1
		for i, c := range f {
			if c == r {
				idx = i
				break
			}
		}
		switch {
		case idx < 0:
			b.WriteRune(r)
		case idx < len(t):
			b.WriteRune(t[idx])
		}
	}
	return b.String()
}

func digest(s, alg string) (any, error) {
	b := []byte(s)
	switch strings.ToLower(alg) {
	case "md5":
		h := md5.Sum(b)
		return h[:], nil
	case "sha224":
		h := sha256.Sum224(b)
		return h[:], nil
	case "sha256":
		h := sha256.Sum256(b)
		return h[:], nil
	case "sha384":
		h := sha512.Sum384(b)
		return h[:], nil
	case "sha512":
		h := sha512.Sum512(b)
		return h[:], nil
	}
	return nil, fmt.Errorf("%w: unsupported digest algorithm %q", ErrEval, alg)
}

// concatFunc skips NULL arguments; the result is never NULL.
func concatFunc(at int, args []*node) (*node, error) {
	if err := arity("concat", at, args, 1, -1); err != nil {
		return nil, err
	}
	out := make([]*node, len(args))
	for i, a := range args {
		c, err := coerceTo(a, tUtf8)
		if err != nil {
			return nil, err
		}
		out[i] = c
	}
	return &node{kind: kCall, typ: tUtf8, op: "concat", args: out, nullable: true, fn: func(a []any) (any, error) {
		var b strings.Builder
		for _, v := range a {
			if v != nil {
				b.WriteString(v.(string))
			}
		}
		return b.String(), nil
	}}, nil
}

// concatWsFunc is NULL only when the separator is; NULL values are
// skipped.
func concatWsFunc(at int, args []*node) (*node, error) {
	if err := arity("concat_ws", at, args, 2, -1); err != nil {
		return nil, err
	}
	out := make([]*node, len(args))
	for i, a := range args {
		c, err := coerceTo(a, tUtf8)
		if err != nil {
			return nil, err
		}
		out[i] = c
	}
	return &node{kind: kCall, typ: tUtf8, op: "concat_ws", args: out, nullable: true, fn: func(a []any) (any, error) {
		if a[0] == nil {
			return nil, nil
		}
		var parts []string
		for _, v := range a[1:] {
			if v != nil {
				parts = append(parts, v.(string))
			}
		}
		return strings.Join(parts, a[0].(string)), nil
	}}, nil
}

// substrFunc is SQL SUBSTRING: 1-based start, characters; a start before
// 1 eats into the length as in PostgreSQL.
func substrFunc(at int, args []*node) (*node, error) {
	return optional("substr", 2, []arrow.DataType{tUtf8, tInt64, tInt64}, tUtf8, func(a []any) (any, error) {
		r := []rune(a[0].(string))
		start := a[1].(int64)
		end := int64(len(r)) + 1
		if len(a) > 2 {
			n := a[2].(int64)
			if n < 0 {
				return nil, fmt.Errorf("%w: negative substring length %d", ErrEval, n)
			}
			end = start + n
		}
		lo := clamp(start, 1, int64(len(r))+1)
		hi := clamp(end, lo, int64(len(r))+1)
		return string(r[lo-1 : hi-1]), nil
	})(at, args)
}
