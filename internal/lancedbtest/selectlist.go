package lancedbtest

import (
	"fmt"
	"regexp"
	"strings"
)

// SplitSelect turns a SQL select list (`name, upper(name) AS shout,
// `+"`order item`"+`) into createMaterializedView items: a bare column name
// (plain or backtick-quoted) becomes the bare name, anything else must be
// `expression AS alias`. Commas and AS inside parentheses, quotes and
// backticks do not split. It is the LanceDB runner's reading of the
// --select syntax of issue 10, not mvd's parser.
func SplitSelect(list string) ([]Projection, error) {
	items, err := splitTop(list)
	if err != nil {
		return nil, err
	}
	var out []Projection
	for _, it := range items {
		it = strings.TrimSpace(it)
		if it == "" {
			return nil, fmt.Errorf("select: empty item in %q", list)
		}
		if name, ok := bareName(it); ok {
			out = append(out, Projection{Name: name})
			continue
		}
		expr, alias, ok := cutAlias(it)
		if !ok {
			return nil, fmt.Errorf("select: %q is neither a column name nor `expression AS alias`", it)
		}
		out = append(out, Projection{Name: alias, Expr: expr})
	}
	return out, nil
}

var plainIdent = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func bareName(s string) (string, bool) {
	if plainIdent.MatchString(s) {
		return s, true
	}
	if len(s) >= 2 && s[0] == '`' && s[len(s)-1] == '`' {
		inner := s[1 : len(s)-1]
		if !strings.Contains(strings.ReplaceAll(inner, "``", ""), "`") {
			return strings.ReplaceAll(inner, "``", "`"), true
		}
	}
	return "", false
}

// cutAlias splits `expr AS alias` at the last top-level AS.
func cutAlias(s string) (expr, alias string, ok bool) {
	at := -1
	scan(s, func(i int, top bool) {
		if top && i+4 <= len(s) && strings.EqualFold(s[i:i+4], " as ") {
			at = i
		}
	})
	if at < 0 {
		return "", "", false
	}
	expr, alias = strings.TrimSpace(s[:at]), strings.TrimSpace(s[at+4:])
	if name, ok := bareName(alias); ok && expr != "" {
		return expr, name, true
	}
	return "", "", false
}

func splitTop(s string) ([]string, error) {
	var out []string
	start := 0
	depth := scan(s, func(i int, top bool) {
		if top && s[i] == ',' {
			out = append(out, s[start:i])
			start = i + 1
		}
	})
	if depth != 0 {
		return nil, fmt.Errorf("select: unbalanced parentheses or quotes in %q", s)
	}
	return append(out, s[start:]), nil
}

// scan calls fn for each byte with whether it is outside parentheses,
// quotes and backticks; it returns the final nesting (non-zero when
// unbalanced).
func scan(s string, fn func(i int, top bool)) int {
	depth := 0
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"' || c == '`':
			quote = c
		case c == '(':
			depth++
		case c == ')':
			depth--
		}
		fn(i, quote == 0 && depth == 0 && c != quote)
	}
	if quote != 0 {
		return -1
	}
	return depth
}
