package httpapi

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// MaxErrorLine caps an error line: an error that echoes a huge input
// (a generated SQL expression) must not flood its reader.
const MaxErrorLine = 4096

// OneLine folds a multi-line message into one line ("a; b"; a heading
// ending in ':' goes on with a space) and caps its length, as the CLI's
// "mvd: …" lines are.
func OneLine(msg string) string {
	if strings.ContainsAny(msg, "\r\n") {
		var b strings.Builder
		for _, l := range strings.FieldsFunc(msg, func(r rune) bool { return r == '\n' || r == '\r' }) {
			if l = strings.TrimSpace(l); l == "" {
				continue
			}
			if b.Len() > 0 {
				if strings.HasSuffix(b.String(), ":") {
					b.WriteString(" ")
				} else {
					b.WriteString("; ")
				}
			}
			b.WriteString(l)
		}
		msg = b.String()
	}
	if len(msg) > MaxErrorLine {
		cut := MaxErrorLine
		for cut > 0 && !utf8.RuneStart(msg[cut]) {
			cut--
		}
		msg = fmt.Sprintf("%s… (%d more bytes)", msg[:cut], len(msg)-cut)
	}
	return msg
}
