// Package codelimits holds the size limits of the product layers as a
// test, so CI (make test, make lint) fails when a function or a file
// outgrows what one reader takes in at once.
package codelimits

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// Limits of non-test code in the product layers.
const (
	maxFuncLines = 80
	maxFileLines = 600
)

// productLayers are the packages (with their subpackages) the limits
// apply to: every first-party Go package directory, from the view,
// daemon and streaming layers to the command line (cmd) and the
// internal helpers. Out are lance/ and sqlexpr/, format and engine code
// whose decoding and evaluation switch tables are long by nature, and
// the generated protobuf code (.pb.go); bench/ holds only benchmarks.
var productLayers = []string{
	"daemon", "matview", "incremental", "cdc", "stream",
	"checkpoint", "rebuild", "provenance", "plan",
	"cmd", "internal", "vfs", "arrowjson", "subscribe",
	"cluster", "control", "message", "serveinfo",
}

func repoRoot(t *testing.T) string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("no caller information")
	}
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// TestLimits fails for every non-test function over maxFuncLines lines
// and every non-test file over maxFileLines lines in the product layers.
func TestLimits(t *testing.T) {
	root := repoRoot(t)
	fset := token.NewFileSet()
	files := 0
	for _, layer := range productLayers {
		err := filepath.WalkDir(filepath.Join(root, layer), func(path string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			name := d.Name()
			if d.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") || strings.HasSuffix(name, ".pb.go") {
				return nil
			}
			rel, _ := filepath.Rel(root, path)
			f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
			if err != nil {
				t.Errorf("%s: %v", rel, err)
				return nil
			}
			files++
			if n := fset.File(f.Pos()).LineCount(); n > maxFileLines {
				t.Errorf("%s: %d lines (limit %d): split it by concept", rel, n, maxFileLines)
			}
			for _, decl := range f.Decls {
				fn, ok := decl.(*ast.FuncDecl)
				if !ok || fn.Body == nil {
					continue
				}
				lines := fset.Position(fn.End()).Line - fset.Position(fn.Pos()).Line + 1
				if lines > maxFuncLines {
					t.Errorf("%s:%d: func %s is %d lines (limit %d): split the decision from its mechanism", rel, fset.Position(fn.Pos()).Line, funcName(fn), lines, maxFuncLines)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatalf("walk %s: %v", layer, err)
		}
	}
	if files == 0 {
		t.Fatal("no files checked: the layers moved?")
	}
}

func funcName(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return fn.Name.Name
	}
	typ := fn.Recv.List[0].Type
	if s, ok := typ.(*ast.StarExpr); ok {
		typ = s.X
	}
	if g, ok := typ.(*ast.IndexExpr); ok {
		typ = g.X
	}
	if id, ok := typ.(*ast.Ident); ok {
		return id.Name + "." + fn.Name.Name
	}
	return fn.Name.Name
}
