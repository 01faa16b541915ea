package plan

import (
	"fmt"
	"strings"

	"github.com/mvd-project/mvd/sqlexpr"
)

// LanceDBUnsupported lists what in def LanceDB 0.39 cannot plan although
// mvd evaluates it (sqlexpr.LanceDBUnsupported: CASE, CEIL, TRIM(…), …),
// one item per construct and place, such as "CASE (column 'band')" or
// "CEIL (filter)"; nil when LanceDB can refresh the view too. LanceDB
// refuses such SQL when it creates a view, and its refresh of a view mvd
// created with it fails ("… is not supported SQL in lance").
func LanceDBUnsupported(def Definition) []string {
	var out []string
	for _, pr := range def.Projections {
		for _, c := range sqlexpr.LanceDBUnsupported(pr.Expression, false) {
			out = append(out, fmt.Sprintf("%s (column '%s')", c.Name, pr.Output))
		}
	}
	if strings.TrimSpace(def.Filter) != "" {
		for _, c := range sqlexpr.LanceDBUnsupported(def.Filter, true) {
			out = append(out, c.Name+" (filter)")
		}
	}
	return out
}

// LanceDBUnsupportedError is the error of a definition refused because
// LanceDB 0.39 could not refresh it (what LanceDBUnsupported lists); it
// wraps ErrInvalid.
func LanceDBUnsupportedError(list []string) error {
	return invalidf("LanceDB 0.39 cannot plan %s: not supported SQL in lance (refused for LanceDB compatibility; without it mvd creates and refreshes the view)", strings.Join(list, ", "))
}
