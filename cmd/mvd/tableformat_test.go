package main

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

func TestTableCell(t *testing.T) {
	for _, tc := range []struct{ json, want string }{
		{`null`, "∅"},
		{`"null"`, "null"},
		{`""`, `""`},
		{`"∅"`, `"∅"`},
		{`"plain text"`, "plain text"},
		{`"tab\there"`, `"tab\there"`},
		{`"two\nlines"`, `"two\nlines"`},
		{`"bell\u0007"`, `"bell\a"`},
		{`"esc\u001b[31m"`, `"esc\x1b[31m"`},
		{`"\"quoted\""`, `"\"quoted\""`},
		{`"zero\u200bwidth"`, `"zero\u200bwidth"`},
		{`"héllo wörld"`, "héllo wörld"},
		{`"2026-12-01T08:00:00Z"`, "2026-12-01T08:00:00Z"},
		{`42`, "42"},
		{`true`, "true"},
		{`{"a":null,"b":"x\ty"}`, `{"a":null,"b":"x\ty"}`},
		{`[1,null]`, "[1,null]"},
	} {
		if got := tableCell([]byte(tc.json)); got != tc.want {
			t.Errorf("tableCell(%s) = %q, want %q", tc.json, got, tc.want)
		}
	}
	if got := clip(strings.Repeat("é", 50)); utf8.RuneCountInString(got) != maxCell || !strings.HasSuffix(got, "…") {
		t.Errorf("clip: %q", got)
	}
}

// TestScanTableFormat scans a table whose names and values hold nulls, the
// string "null" and control characters, and checks that --format table
// keeps every column aligned and tells null from "null".
func TestScanTableFormat(t *testing.T) {
	as := arrow.NewSchema([]arrow.Field{
		{Name: "we\tird\nname", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, as)
	defer b.Release()
	vals := []*string{nil, ptr("null"), ptr(""), ptr("a\tb"), ptr("line\nbreak\r"), ptr("\x1b[2J"), ptr("∅"), ptr("ok")}
	for i, v := range vals {
		if v == nil {
			b.Field(0).AppendNull()
		} else {
			b.Field(0).(*array.StringBuilder).Append(*v)
		}
		b.Field(1).(*array.Int64Builder).Append(int64(1000 + i))
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	table := writeTestTable(t, rec)
	code, out, errOut := runCLI("table", "scan", table, "--format", "table")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != len(vals)+1 {
		t.Fatalf("%d lines for %d rows:\n%s", len(lines), len(vals), out)
	}
	col := -1 // the character column where "id" starts, the same on every line
	var cells []string
	for i, line := range lines {
		want := "id"
		if i > 0 {
			want = itoa(uint64(1000 + i - 1))
		}
		at := strings.LastIndex(line, want)
		if at < 0 {
			t.Fatalf("line %d %q lacks %s", i, line, want)
		}
		c := utf8.RuneCountInString(line[:at])
		if col < 0 {
			col = c
		} else if c != col {
			t.Errorf("line %d: second column at %d, header at %d:\n%s", i, c, col, out)
		}
		cells = append(cells, strings.TrimRight(line[:at], " "))
	}
	want := []string{`"we\tird\nname"`, "∅", "null", `""`, `"a\tb"`, `"line\nbreak\r"`, `"\x1b[2J"`, `"∅"`, "ok"}
	for i := range want {
		if cells[i] != want[i] {
			t.Errorf("line %d: cell %q, want %q", i, cells[i], want[i])
		}
	}
}

func ptr(s string) *string { return &s }
