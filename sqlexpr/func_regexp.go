package sqlexpr

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
)

// sqlRegexp compiles a pattern with optional flags in a[flagIdx].
func sqlRegexp(pattern string, a []any, flagIdx int) (*regexp.Regexp, error) {
	prefix := ""
	if len(a) > flagIdx {
		flags := strings.ReplaceAll(a[flagIdx].(string), "g", "")
		for _, f := range flags {
			if !strings.ContainsRune("imsU", f) {
				return nil, fmt.Errorf("%w: unsupported regexp flag %q", ErrEval, f)
			}
		}
		if flags != "" {
			prefix = "(?" + flags + ")"
		}
	}
	re, err := regexp.Compile(prefix + pattern)
	if err != nil {
		return nil, fmt.Errorf("%w: bad regular expression: %v", ErrEval, err)
	}
	return re, nil
}

// regexpReplaceFunc replaces the first match, or all with flag 'g';
// \1-style back references in the replacement become ${1}.
func regexpReplaceFunc(at int, args []*node) (*node, error) {
	return optional("regexp_replace", 3, []arrow.DataType{tUtf8, tUtf8, tUtf8, tUtf8}, tUtf8, func(a []any) (any, error) {
		re, err := sqlRegexp(a[1].(string), a, 3)
		if err != nil {
			return nil, err
		}
		repl := backrefs(a[2].(string))
		s := a[0].(string)
		if len(a) > 3 && strings.Contains(a[3].(string), "g") {
			return re.ReplaceAllString(s, repl), nil
		}
		loc := re.FindStringSubmatchIndex(s)
		if loc == nil {
			return s, nil
		}
		var dst []byte
		dst = re.ExpandString(dst, repl, s, loc)
		return s[:loc[0]] + string(dst) + s[loc[1]:], nil
	})(at, args)
}

// backrefs rewrites \N to ${N} and escapes literal $.
func backrefs(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '\\' && i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '9':
			b.WriteString("${" + s[i+1:i+2] + "}")
			i++
		case s[i] == '$':
			b.WriteString("$$")
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}
