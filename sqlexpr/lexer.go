package sqlexpr

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// tokKind classifies a token.
type tokKind int

const (
	tokEOF tokKind = iota
	tokIdent
	tokQuoted // quoted identifier: backticks, or double quotes in a filter
	tokNumber
	tokString
	tokOp
)

// token is one lexical unit; text holds the decoded value for strings and
// quoted identifiers, the raw text otherwise.
type token struct {
	kind tokKind
	text string
	pos  int // offset of the first byte
	end  int // offset just past the last byte
	// dq marks text in double quotes: a string in a projection, a
	// case-sensitive name in a filter (see dialect).
	dq bool
}

// is reports whether t is the keyword kw (case-insensitive, unquoted).
func (t token) is(kw string) bool {
	return t.kind == tokIdent && strings.EqualFold(t.text, kw)
}

// quote is the quote character of a quoted name token, 0 for a bare one.
func (t token) quote() byte {
	switch {
	case t.kind != tokQuoted:
		return 0
	case t.dq:
		return '"'
	}
	return '`'
}

// isOp reports whether t is the operator op.
func (t token) isOp(op string) bool { return t.kind == tokOp && t.text == op }

// lex splits src into tokens. Lexing everything up front keeps the parser
// simple and bounds its work by the input length.
func lex(src string) ([]token, error) {
	var toks []token
	i := 0
	for i < len(src) {
		c := src[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '-' && i+1 < len(src) && src[i+1] == '-':
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case c == '\'':
			s, n, err := lexQuoted(src, i, '\'')
			if err != nil {
				return nil, err
			}
			toks = append(toks, token{kind: tokString, text: s, pos: i, end: n})
			i = n
		case c == '`':
			s, n, err := lexQuoted(src, i, c)
			if err != nil {
				return nil, err
			}
			toks = append(toks, token{kind: tokQuoted, text: s, pos: i, end: n})
			i = n
		case c == '"':
			// A string until the parser says otherwise: LanceDB's
			// projections read "x" as the string 'x', its filters as the
			// column x (parser.filterDialect).
			s, n, err := lexQuoted(src, i, c)
			if err != nil {
				return nil, err
			}
			toks = append(toks, token{kind: tokString, text: s, pos: i, end: n, dq: true})
			i = n
		case c >= '0' && c <= '9' || c == '.' && i+1 < len(src) && src[i+1] >= '0' && src[i+1] <= '9':
			n := lexNumber(src, i)
			toks = append(toks, token{kind: tokNumber, text: src[i:n], pos: i, end: n})
			i = n
		case c == '_' || c < utf8.RuneSelf && unicode.IsLetter(rune(c)) || c >= utf8.RuneSelf:
			n := i
			for n < len(src) {
				r, sz := utf8.DecodeRuneInString(src[n:])
				if r == '_' || r == '$' || unicode.IsLetter(r) || unicode.IsDigit(r) {
					n += sz
					continue
				}
				break
			}
			if n == i {
				return nil, errAt(ErrSyntax, i, "unexpected character %q", src[i:i+1])
			}
			toks = append(toks, token{kind: tokIdent, text: src[i:n], pos: i, end: n})
			i = n
		default:
			op := ""
			for _, cand := range []string{"<>", "!=", "<=", ">=", "||", "::", "==", "=", "<", ">", "+", "-", "*", "/", "%", "(", ")", ",", ".", "[", "]", ";"} {
				if strings.HasPrefix(src[i:], cand) {
					op = cand
					break
				}
			}
			if op == "" {
				r, _ := utf8.DecodeRuneInString(src[i:])
				return nil, errAt(ErrSyntax, i, "unexpected character %q", r)
			}
			n := i + len(op)
			if op == "==" {
				op = "="
			}
			toks = append(toks, token{kind: tokOp, text: op, pos: i, end: n})
			i = n
		}
	}
	toks = append(toks, token{kind: tokEOF, pos: len(src), end: len(src)})
	return toks, nil
}

// lexQuoted reads a quoted run starting at src[start] == q, where a
// doubled quote stands for one quote character.
func lexQuoted(src string, start int, q byte) (string, int, error) {
	var b strings.Builder
	i := start + 1
	for i < len(src) {
		if src[i] == q {
			if i+1 < len(src) && src[i+1] == q {
				b.WriteByte(q)
				i += 2
				continue
			}
			return b.String(), i + 1, nil
		}
		b.WriteByte(src[i])
		i++
	}
	return "", 0, errAt(ErrSyntax, start, "unterminated quoted text, expected closing %c", q)
}

// lexNumber returns the end of the numeric literal starting at i:
// digits, an optional fraction and an optional exponent.
func lexNumber(src string, i int) int {
	digits := func(i int) int {
		for i < len(src) && src[i] >= '0' && src[i] <= '9' {
			i++
		}
		return i
	}
	i = digits(i)
	if i < len(src) && src[i] == '.' {
		i = digits(i + 1)
	}
	if i < len(src) && (src[i] == 'e' || src[i] == 'E') {
		j := i + 1
		if j < len(src) && (src[j] == '+' || src[j] == '-') {
			j++
		}
		if j < len(src) && src[j] >= '0' && src[j] <= '9' {
			i = digits(j)
		}
	}
	return i
}
