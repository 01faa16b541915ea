package matview

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/mvd-project/mvd/internal/lancedbtest"
	"github.com/mvd-project/mvd/plan"
)

// TestScenarios runs the data-driven refresh scenarios of
// testdata/scenarios/*.txt. Each line is one command; tables are written by
// LanceDB 0.39, views are created and refreshed by mvd, and after every
// successful refresh LanceDB checks the view holds exactly its definition
// evaluated on the source at the refreshed version. Commands:
//
//	source T N                       LanceDB creates T with the standard rows 0..N-1
//	view V SRC [select=S] [where=W] [limit=N]
//	append T A B | overwrite T A B   rows A..B-1 (variant 1 for overwrite)
//	delete T "WHERE" | update T "WHERE" "col=SQL[;col=SQL]"
//	upsert T A B | keep T A B        merge_insert on id: upsert rows A..B-1 (variant 2) / delete rows not in A..B-1
//	compact T | cleanup T | index T COL | restore T N | drop T
//	add_column T NAME SQL | drop_column T COL | recreate T N
//	refresh V [full] [version=N] [cascade] -> MODE [rows=N]   or   -> error "TEXT"
//	ldb_refresh V -> MODE            LanceDB's own refresh
//	rows V N                         the view holds N rows
func TestScenarios(t *testing.T) {
	lancedbtest.Require(t)
	files, err := filepath.Glob(filepath.Join(lancedbtest.RepoRoot(t), "testdata", "scenarios", "*.txt"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenario files: %v", err)
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".txt"), func(t *testing.T) { runScenario(t, f) })
	}
}

func runScenario(t *testing.T, file string) {
	ctx := context.Background()
	dir := t.TempDir()
	d := lancedbtest.StartDriver(t, dir)
	db := must[*DB](t)(Open(dir))
	fh, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		cmd, expect, _ := strings.Cut(text, "->")
		args, err := splitArgs(cmd)
		if err != nil {
			t.Fatalf("%s:%d: %v", file, line, err)
		}
		at := fmt.Sprintf("%s:%d: %s", filepath.Base(file), line, text)
		fail := func(format string, a ...any) { t.Helper(); t.Fatalf("%s: %s", at, fmt.Sprintf(format, a...)) }
		num := func(i int) int64 {
			n, err := strconv.ParseInt(args[i], 10, 64)
			if err != nil {
				fail("argument %d: %v", i, err)
			}
			return n
		}
		ok := func(_ any, err error) {
			if err != nil {
				fail("%v", err)
			}
		}
		switch args[0] {
		case "source":
			ok(d.CreateTable(args[1], lancedbtest.SourceSchema(), lancedbtest.SourceRows(0, num(2), 0)))
		case "recreate":
			ok(nil, d.DropTable(args[1]))
			ok(d.CreateTable(args[1], lancedbtest.SourceSchema(), lancedbtest.SourceRows(0, num(2), 3)))
		case "view":
			var def Definition
			for _, kv := range args[3:] {
				k, v, _ := strings.Cut(kv, "=")
				switch k {
				case "select":
					sel, err := plan.ParseSelect(v)
					if err != nil {
						fail("%v", err)
					}
					def.Select = sel
				case "where":
					def.Where = v
				case "limit":
					n, _ := strconv.ParseUint(v, 10, 64)
					def.Limit = &n
				}
			}
			ok(db.CreateView(ctx, args[1], args[2], def))
		case "append":
			ok(d.Add(args[1], lancedbtest.SourceRows(num(2), num(3), 0)))
		case "overwrite":
			ok(d.Overwrite(args[1], lancedbtest.SourceRows(num(2), num(3), 1)))
		case "delete":
			ok(d.Delete(args[1], args[2]))
		case "update":
			set := map[string]string{}
			for _, a := range strings.Split(args[3], ";") {
				k, v, _ := strings.Cut(a, "=")
				set[strings.TrimSpace(k)] = strings.TrimSpace(v)
			}
			ok(d.Update(args[1], args[2], set))
		case "upsert":
			ok(d.Upsert(args[1], "id", lancedbtest.SourceRows(num(2), num(3), 2)))
		case "keep":
			ok(d.DeleteBySource(args[1], "id", lancedbtest.SourceRows(num(2), num(3), 0)))
		case "compact":
			ok(d.Optimize(args[1]))
		case "cleanup":
			ok(d.OptimizeCleanup(args[1], 0))
		case "index":
			ok(d.CreateIndex(args[1], args[2], ""))
		case "restore":
			ok(d.Restore(args[1], uint64(num(2))))
		case "drop":
			ok(nil, d.DropTable(args[1]))
		case "add_column":
			ok(d.AddColumns(args[1], lancedbtest.Column{Name: args[2], SQL: args[3]}))
		case "drop_column":
			ok(d.DropColumns(args[1], args[2]))
		case "rows":
			n := must[uint64](t)(d.Count(args[1], 0))
			if int64(n) != num(2) {
				fail("view holds %d rows", n)
			}
		case "ldb_refresh":
			r, err := d.Refresh(args[1], lancedbtest.RefreshOptions{})
			if err != nil {
				fail("%v", err)
			}
			if want := strings.TrimSpace(expect); r.Mode != want {
				fail("LanceDB refreshed %+v, want %s", r, want)
			}
		case "refresh":
			var o RefreshOptions
			cascade := false
			for _, a := range args[2:] {
				switch {
				case a == "full":
					o.Full = true
				case a == "cascade":
					cascade = true
				case strings.HasPrefix(a, "version="):
					n, _ := strconv.ParseUint(strings.TrimPrefix(a, "version="), 10, 64)
					o.SourceVersion = &n
				}
			}
			var r *Result
			var err error
			if cascade {
				var steps []CascadeStep
				if steps, err = db.RefreshCascade(ctx, args[1], o); err == nil {
					r = steps[len(steps)-1].Result
					for _, s := range steps[:len(steps)-1] {
						if cerr := d.CheckView(s.View, s.Result.SourceVersion); cerr != nil {
							fail("upstream %s: %v", s.View, cerr)
						}
					}
				}
			} else {
				var v *View
				if v, err = db.OpenView(args[1]); err == nil {
					r, err = v.Refresh(ctx, o)
				}
			}
			exp, _ := splitArgs(expect)
			if len(exp) == 0 {
				fail("refresh needs an expectation")
			}
			if exp[0] == "error" {
				if err == nil {
					fail("refresh succeeded (%+v), want an error", r)
				}
				if len(exp) > 1 && !strings.Contains(err.Error(), exp[1]) {
					fail("error %q does not contain %q", err, exp[1])
				}
				continue
			}
			if err != nil {
				fail("%v", err)
			}
			if string(r.Mode) != exp[0] {
				fail("mode %s (%s), want %s (result %+v)", r.Mode, r.Reason, exp[0], r)
			}
			for _, e := range exp[1:] {
				if n, found := strings.CutPrefix(e, "rows="); found && n != strconv.FormatUint(r.RowsWritten, 10) {
					fail("rows_written %d, want %s", r.RowsWritten, n)
				}
				if n, found := strings.CutPrefix(e, "source_version="); found && n != strconv.FormatUint(r.SourceVersion, 10) {
					fail("source_version %d, want %s", r.SourceVersion, n)
				}
			}
			if err := d.CheckView(args[1], r.SourceVersion); err != nil {
				fail("%v", err)
			}
		default:
			fail("unknown command %q", args[0])
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
}

// splitArgs splits a command line on spaces, keeping "double-quoted"
// arguments (key="value" too) whole; \" inside quotes is a quote.
func splitArgs(s string) ([]string, error) {
	var out []string
	var cur strings.Builder
	in, have := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case in && c == '\\' && i+1 < len(s) && s[i+1] == '"':
			cur.WriteByte('"')
			i++
		case c == '"':
			in = !in
			have = true
		case c == ' ' && !in:
			if have || cur.Len() > 0 {
				out = append(out, cur.String())
				cur.Reset()
				have = false
			}
		default:
			cur.WriteByte(c)
		}
	}
	if in {
		return nil, fmt.Errorf("unterminated quote")
	}
	if have || cur.Len() > 0 {
		out = append(out, cur.String())
	}
	return out, nil
}
