package datafile

import (
	"strings"
	"testing"
)

// TestPages describes the pages of LanceDB-written files of each version:
// every column has its pages, each named by its layout (2.1+) or array
// encoding (2.0), with the field it stores, and no page's bytes exceed
// the file.
func TestPages(t *testing.T) {
	for name, layout := range map[string]string{
		"types_v20_5rows.lance": "",
		"types_v21_5rows.lance": "_layout",
		"types_v22_5rows.lance": "_layout",
	} {
		r := openSeed(t, name)
		pages, err := r.Pages()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		cols := map[int]bool{}
		fields := map[int32]bool{}
		for _, p := range pages {
			cols[p.Column] = true
			fields[p.Field] = true
			if p.Encoding == "" || !strings.Contains(p.Encoding, layout) || p.Bytes > uint64(r.size) {
				t.Errorf("%s: page %+v", name, p)
			}
		}
		if len(cols) != len(r.cols) || len(fields) != len(r.cols) {
			t.Errorf("%s: pages of %d columns and %d fields, the file has %d columns", name, len(cols), len(fields), len(r.cols))
		}
	}
}
