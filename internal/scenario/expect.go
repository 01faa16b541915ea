package scenario

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// Expect is one expected outcome.
type Expect struct {
	// Lines are the expected output lines as written.
	Lines []string
	// Err is set when the step must fail: the expected text is a
	// substring of the error's message ("error: TEXT"). Errors wrap
	// LanceDB's or mvd's message with context, so a substring is what a
	// scenario can pin.
	Err string
	// Fields are the key=value pairs when the expectation is one line of
	// them (e.g. a refresh result); only these keys are compared, and a
	// value "*" only requires the key.
	Fields []Field
}

// Field is one key=value of an expectation.
type Field struct{ Key, Value string }

// Field returns the value of key, if the expectation names it.
func (e Expect) Field(key string) (string, bool) {
	for _, f := range e.Fields {
		if f.Key == key {
			return f.Value, true
		}
	}
	return "", false
}

func (e Expect) without(key string) Expect {
	out := Expect{Lines: e.Lines, Err: e.Err}
	for _, f := range e.Fields {
		if f.Key != key {
			out.Fields = append(out.Fields, f)
		}
	}
	if len(e.Fields) > 0 {
		out.Lines = []string{FormatFields(out.Fields)}
	}
	return out
}

// parseExpected splits expected lines into the main expectation and the
// "lancedb:" one.
func parseExpected(lines []string) (Expect, *Expect, error) {
	var main, lance []string
	for _, l := range lines {
		if rest, ok := strings.CutPrefix(l, "lancedb:"); ok {
			lance = append(lance, strings.TrimSpace(rest))
		} else {
			main = append(main, l)
		}
	}
	if len(main) == 0 {
		return Expect{}, nil, fmt.Errorf("no expected output after %q", Separator)
	}
	m, err := newExpect(main)
	if err != nil {
		return Expect{}, nil, err
	}
	if lance == nil {
		return m, nil, nil
	}
	l, err := newExpect(lance)
	if err != nil {
		return Expect{}, nil, fmt.Errorf("lancedb: %w", err)
	}
	return m, &l, nil
}

func newExpect(lines []string) (Expect, error) {
	e := Expect{Lines: lines}
	if rest, ok := strings.CutPrefix(lines[0], "error:"); ok {
		if len(lines) > 1 {
			return e, fmt.Errorf("an error expectation is one line")
		}
		e.Err = strings.TrimSpace(rest)
		if e.Err == "" {
			return e, fmt.Errorf("error: with no text")
		}
		return e, nil
	}
	if len(lines) == 1 {
		if fs, ok := parseFields(lines[0]); ok {
			e.Fields = fs
		}
	}
	return e, nil
}

// parseFields reads a line made only of key=value words.
func parseFields(line string) ([]Field, bool) {
	words := strings.Fields(line)
	var out []Field
	for _, w := range words {
		k, v, ok := strings.Cut(w, "=")
		if !ok || !isKey(k) || v == "" {
			return nil, false
		}
		out = append(out, Field{k, v})
	}
	return out, len(out) > 0
}

// FormatFields writes fields as `k=v k=v`.
func FormatFields(fs []Field) string {
	parts := make([]string, len(fs))
	for i, f := range fs {
		parts[i] = f.Key + "=" + f.Value
	}
	return strings.Join(parts, " ")
}

// FormatRefresh is a refresh result as runners print it.
func FormatRefresh(mode string, rowsWritten, sourceVersion, version uint64) string {
	return fmt.Sprintf("mode=%s rows_written=%d source_version=%d version=%d", mode, rowsWritten, sourceVersion, version)
}

// Match checks an outcome: err is the step's error, out its output
// (FormatRefresh for a refresh, "ok", "version=N", …). Field expectations
// compare only the named keys; a JSON expectation (view show) compares as
// JSON, the output's top-level object holding at least the expected keys
// with equal values; anything else compares line by line, exactly.
func (e Expect) Match(out string, err error) error {
	if e.Err != "" {
		if err == nil {
			return fmt.Errorf("succeeded with %q, want an error containing %q", out, e.Err)
		}
		if !strings.Contains(err.Error(), e.Err) {
			return fmt.Errorf("error %q, want one containing %q", err.Error(), e.Err)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("error %q, want %s", err.Error(), strings.Join(e.Lines, "\n"))
	}
	if len(e.Fields) > 0 {
		got, ok := parseFields(out)
		if !ok {
			return fmt.Errorf("output %q, want %s", out, FormatFields(e.Fields))
		}
		for _, f := range e.Fields {
			v, found := "", false
			for _, g := range got {
				if g.Key == f.Key {
					v, found = g.Value, true
				}
			}
			if f.Value == "*" && found {
				continue
			}
			if v != f.Value {
				return fmt.Errorf("output %q: %s=%q, want %q", out, f.Key, v, f.Value)
			}
		}
		return nil
	}
	want := strings.Join(e.Lines, "\n")
	if len(e.Lines) == 1 && strings.HasPrefix(want, "{") {
		if equalJSON(want, out) {
			return nil
		}
		return fmt.Errorf("output %s, want %s", out, want)
	}
	if strings.TrimRight(out, "\n") != want {
		return fmt.Errorf("output:\n%s\nwant:\n%s", out, want)
	}
	return nil
}

// equalJSON reports whether got holds want: equal JSON values, except
// that a top-level object may carry keys want does not name (mvd's view
// show adds the watermark to the definition).
func equalJSON(want, got string) bool {
	var x, y any
	dw, dg := json.NewDecoder(bytes.NewReader([]byte(want))), json.NewDecoder(bytes.NewReader([]byte(got)))
	dw.UseNumber()
	dg.UseNumber()
	if dw.Decode(&x) != nil || dg.Decode(&y) != nil {
		return false
	}
	xo, xok := x.(map[string]any)
	yo, yok := y.(map[string]any)
	if xok && yok {
		for k, v := range xo {
			gv, ok := yo[k]
			if !ok || !sameJSON(v, gv) {
				return false
			}
		}
		return true
	}
	return sameJSON(x, y)
}

func sameJSON(a, b any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return bytes.Equal(ja, jb)
}
