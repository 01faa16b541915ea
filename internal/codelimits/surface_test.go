package codelimits

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// maxDaemonExports bounds package daemon's exported surface: what the
// serve command, daemon/wire and the tests outside need, not the pieces
// only daemon itself wires together (issue 25, "small surface").
const maxDaemonExports = 50

// exportedDecls lists the exported top-level declarations of the
// non-test files in dir: types, functions (not methods), constants and
// variables, one entry per name. Methods and struct fields are not
// counted: they are part of their type's surface.
func exportedDecls(t *testing.T, dir string) []string {
	t.Helper()
	fset := token.NewFileSet()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil && d.Name.IsExported() {
					names = append(names, "func "+d.Name.Name)
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						if s.Name.IsExported() {
							names = append(names, "type "+s.Name.Name)
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							if n.IsExported() {
								names = append(names, d.Tok.String()+" "+n.Name)
							}
						}
					}
				}
			}
		}
	}
	sort.Strings(names)
	return names
}

// TestDaemonSurface fails when package daemon (not its subpackages)
// exports more than maxDaemonExports top-level declarations.
func TestDaemonSurface(t *testing.T) {
	names := exportedDecls(t, filepath.Join(repoRoot(t), "daemon"))
	if len(names) == 0 {
		t.Fatal("no exported declaration found in daemon: wrong directory?")
	}
	if len(names) > maxDaemonExports {
		t.Errorf("daemon exports %d top-level declarations, limit %d; unexport what only daemon uses:\n  %s",
			len(names), maxDaemonExports, strings.Join(names, "\n  "))
	}
	t.Logf("daemon exports %d top-level declarations (limit %d)", len(names), maxDaemonExports)
}
