package sqlexpr

import (
	"reflect"
	"testing"
)

// TestLanceDBUnsupported: each construct LanceDB 0.39 refuses (checked
// against LanceDB: "… is not supported SQL in lance", "Unsupported data
// type", "Unary operator 'Plus' is not supported", the LIKE escape) is
// named, and what it plans is not.
func TestLanceDBUnsupported(t *testing.T) {
	cases := []struct {
		src  string
		want []string
	}{
		{"CASE WHEN id > 1 THEN 'x' END", []string{"CASE"}},
		{"CASE id WHEN 1 THEN upper(name) ELSE ceil(d) END", []string{"CASE", "CEIL"}},
		{"substr(name, 1, 1)", []string{"SUBSTR"}},
		{"SUBSTRING(name FROM 1 FOR 1)", []string{"SUBSTR"}},
		{"TRIM(name)", []string{"TRIM"}},
		{"TRIM(BOTH 'a' FROM name)", []string{"TRIM"}},
		{"floor(d) + 1", []string{"FLOOR"}},
		{"EXTRACT(year FROM d)", []string{"EXTRACT"}},
		{"id IS DISTINCT FROM 1", []string{"IS DISTINCT FROM"}},
		{"id IS NOT DISTINCT FROM 1", []string{"IS NOT DISTINCT FROM"}},
		{"CAST(id AS VARCHAR)", []string{"CAST AS VARCHAR"}},
		{"CAST(id AS TEXT) || 'x'", []string{"CAST AS TEXT"}},
		{"id::INT8", []string{"CAST AS INT8"}},
		{"(id > 1) IS UNKNOWN", []string{"IS UNKNOWN"}},
		{"+id", []string{"unary +"}},
		{"name LIKE 'a!%' ESCAPE '!'", []string{"LIKE … ESCAPE other than backslash"}},
		// What LanceDB 0.39 plans.
		{"btrim(name)", nil},
		{"ltrim(name, 'a')", nil},
		{"date_part('year', d)", nil},
		{"CAST(id AS STRING)", nil},
		{"id::STRING", nil},
		{"TRY_CAST(name AS INT)", nil},
		{"CAST(id AS BIGINT UNSIGNED)", nil},
		{"name LIKE 'a%'", nil},
		{"round(d) + abs(-id)", nil},
		{"upper(name) || 'trim'", nil},
		{"regexp_like(name, 'a')", nil},
		{"id >", nil}, // does not parse: reported elsewhere
	}
	for _, c := range cases {
		var got []string
		for _, k := range LanceDBUnsupported(c.src, false) {
			got = append(got, k.Name)
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("LanceDBUnsupported(%q) = %q, want %q", c.src, got, c.want)
		}
	}
	if got := LanceDBUnsupported(`"id" > 1 AND ceil(d) > 2`, true); len(got) != 1 || got[0].Name != "CEIL" || got[0].Pos != 13 {
		t.Errorf("filter: %+v", got)
	}
}
