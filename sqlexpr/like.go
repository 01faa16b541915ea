package sqlexpr

import (
	"regexp"
	"strings"
)

// likeRegexp translates a LIKE pattern (% any run, _ one character,
// escape char before a literal % or _) into an anchored regexp.
func likeRegexp(pattern string, escape rune, fold bool) (*regexp.Regexp, error) {
	var b strings.Builder
	b.WriteString("(?s)")
	if fold {
		b.WriteString("(?i)")
	}
	b.WriteString("^")
	escaped := false
	for _, r := range pattern {
		switch {
		case escaped:
			b.WriteString(regexp.QuoteMeta(string(r)))
			escaped = false
		case r == escape:
			escaped = true
		case r == '%':
			b.WriteString(".*")
		case r == '_':
			b.WriteString(".")
		default:
			b.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	if escaped {
		b.WriteString(regexp.QuoteMeta(string(escape)))
	}
	b.WriteString("$")
	return regexp.Compile(b.String())
}

func (ck *checker) like(e *Like) (*node, error) {
	x, err := ck.check(e.X)
	if err != nil {
		return nil, err
	}
	p, err := ck.check(e.Pattern)
	if err != nil {
		return nil, err
	}
	if !isString(p.typ) && !isNull(p.typ) {
		return nil, errAt(ErrType, e.Pattern.Pos(), "LIKE pattern must be a string, got %s", p.typ)
	}
	if x.kind == kCol && p.kind == kLit && isString(x.typ) {
		if p, err = literalToColumn(p, x.typ, e.At); err != nil {
			return nil, err
		}
	}
	if x, err = coerceTo(x, tUtf8); err != nil {
		return nil, err
	}
	if p, err = coerceTo(p, tUtf8); err != nil {
		return nil, err
	}
	if !isString(x.typ) || !isString(p.typ) {
		return nil, errAt(ErrType, e.At, "LIKE needs strings")
	}
	escape := '\\'
	if e.Escape != nil {
		lit, ok := e.Escape.(*Literal)
		if !ok || lit.Kind != LitString || len([]rune(lit.Text)) != 1 {
			return nil, errAt(ErrType, e.Escape.Pos(), "ESCAPE must be a one-character string")
		}
		escape = []rune(lit.Text)[0]
	}
	fold, not := e.Fold, e.Not
	var fixed interface{ MatchString(string) bool }
	if p.kind == kLit && p.val != nil {
		re, err := likeRegexp(p.val.(string), escape, fold)
		if err != nil {
			return nil, errAt(ErrType, e.Pattern.Pos(), "bad LIKE pattern: %v", err)
		}
		fixed = re
	}
	n := call("like", tBool, func(a []any) (any, error) {
		m := fixed
		if m == nil {
			re, err := likeRegexp(a[1].(string), escape, fold)
			if err != nil {
				return nil, err
			}
			m = re
		}
		return m.MatchString(a[0].(string)) != not, nil
	}, x, p)
	if fixed != nil {
		n.aux = likeAux{match: fixed.MatchString, not: not}
	}
	return n, nil
}

// likeAux is what the LIKE kernel needs: the constant pattern's matcher.
type likeAux struct {
	match func(string) bool
	not   bool
}
