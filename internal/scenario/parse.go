// Package scenario parses mvd's data-driven refresh scenarios
// (testdata/scenarios/*.txt; the format is described in the README there):
// a sequence of commands, each with the output it must produce, in the style
// of cockroachdb/pebble's datadriven tests.
//
// The package only parses and compares: runners (matview's against mvd,
// lancedbtest's against LanceDB) execute the steps.
package scenario

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Separator divides a command from its expected output.
const Separator = "----"

// Pos is where a step starts: file and 1-based line.
type Pos struct {
	File string
	Line int
}

func (p Pos) String() string { return fmt.Sprintf("%s:%d", p.File, p.Line) }

// Arg is one argument of a directive line or input block: a bare word
// (Key only), key=value, or an input line "key: value".
type Arg struct {
	Key   string
	Value string
	Bare  bool // a word without '='
}

// Block is one command as written, before typing: the directive words, the
// input lines between the directive and "----", and the expected lines.
type Block struct {
	Pos      Pos
	Line     string   // the directive line as written
	Words    []string // its words, quotes removed
	Input    []string // input lines
	Expected []string // expected output lines
}

// ParseFile reads and parses a scenario file.
func ParseFile(path string) (*File, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(filepath.Base(path), b)
}

// Blocks splits a scenario into blocks. Lines starting with '#' outside a
// block are comments; blank lines separate blocks; a block's expected
// output runs from "----" to the next blank line or the end.
func Blocks(name string, src []byte) ([]Block, error) {
	if bytes.IndexByte(src, 0) >= 0 {
		return nil, fmt.Errorf("%s: NUL byte in scenario", name)
	}
	lines := strings.Split(strings.ReplaceAll(string(src), "\r\n", "\n"), "\n")
	if n := len(lines); n > 0 && lines[n-1] == "" {
		lines = lines[:n-1] // the final newline ends the last line
	}
	var out []Block
	for i := 0; i < len(lines); {
		line := strings.TrimRight(lines[i], " \t")
		if line == "" || strings.HasPrefix(strings.TrimSpace(line), "#") {
			i++
			continue
		}
		b := Block{Pos: Pos{name, i + 1}, Line: strings.TrimSpace(line)}
		words, err := splitWords(b.Line)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", b.Pos, err)
		}
		b.Words = words
		i++
		sep := false
		for ; i < len(lines); i++ {
			l := strings.TrimRight(lines[i], " \t")
			if l == Separator {
				sep = true
				i++
				break
			}
			if l == "" {
				return nil, fmt.Errorf("%s: %q: blank line before %q", b.Pos, b.Line, Separator)
			}
			b.Input = append(b.Input, strings.TrimSpace(l))
		}
		if !sep {
			return nil, fmt.Errorf("%s: %q: no %q line", b.Pos, b.Line, Separator)
		}
		for ; i < len(lines); i++ {
			l := strings.TrimRight(lines[i], " \t")
			if l == "" {
				break
			}
			b.Expected = append(b.Expected, l)
		}
		out = append(out, b)
	}
	return out, nil
}

// splitWords splits a directive on blanks; a double-quoted part (Go
// syntax, also as the value of key="…") is one word with its quotes
// removed.
func splitWords(line string) ([]string, error) {
	var words []string
	for i := 0; i < len(line); {
		if line[i] == ' ' || line[i] == '\t' {
			i++
			continue
		}
		var w strings.Builder
		for i < len(line) && line[i] != ' ' && line[i] != '\t' {
			if line[i] != '"' {
				w.WriteByte(line[i])
				i++
				continue
			}
			q, err := strconv.QuotedPrefix(line[i:])
			if err != nil {
				return nil, fmt.Errorf("bad quoted string at column %d: %s", i+1, line[i:])
			}
			s, _ := strconv.Unquote(q)
			w.WriteString(s)
			i += len(q)
		}
		words = append(words, w.String())
	}
	return words, nil
}

// args returns the key=value and bare words after the first n words, then
// the input lines of the form "key: value" (other input lines are left to
// the caller).
func (b Block) args(n int) (args []Arg, rest []string) {
	for _, w := range b.Words[n:] {
		if k, v, ok := strings.Cut(w, "="); ok {
			args = append(args, Arg{Key: k, Value: v})
		} else {
			args = append(args, Arg{Key: w, Bare: true})
		}
	}
	for _, l := range b.Input {
		k, v, ok := strings.Cut(l, ":")
		if ok && isKey(k) {
			args = append(args, Arg{Key: k, Value: strings.TrimSpace(v)})
			continue
		}
		rest = append(rest, l)
	}
	return args, rest
}

func isKey(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}
