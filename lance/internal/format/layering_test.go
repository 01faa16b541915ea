package format

import (
	"go/build"
	"path/filepath"
	"slices"
	"testing"
)

// TestLayering keeps the dependency arrows one way: format <- datafile,
// datawriter, rowid <- lance. The reader and the writer sit on this base and
// never import the table package (nor each other); format imports none of
// them.
func TestLayering(t *testing.T) {
	const mod = "github.com/mvd-project/mvd/lance"
	forbidden := map[string][]string{
		".":                {mod, mod + "/datafile", mod + "/datawriter", mod + "/internal/rowid"},
		"../rowid":         {mod, mod + "/datafile", mod + "/datawriter"},
		"../../datafile":   {mod, mod + "/datawriter"},
		"../../datawriter": {mod, mod + "/datafile"},
	}
	for dir, bad := range forbidden {
		pkg, err := build.ImportDir(filepath.Clean(dir), 0)
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		for _, imp := range pkg.Imports {
			if slices.Contains(bad, imp) {
				t.Errorf("%s imports %s: the arrows must point one way", pkg.ImportPath, imp)
			}
		}
	}
}
