package lance

import (
	"fmt"
	"strings"
)

// versionNotFound explains why version v is not among refs (sorted,
// non-empty): a version inside the range that is missing is a gap in the
// history (a manifest removed by cleanup or lost), one outside is not
// written yet or never was.
func versionNotFound(v uint64, refs []VersionRef) string {
	have := "versions " + versionRanges(refs)
	if len(refs) == 1 {
		have = fmt.Sprintf("only version %d", refs[0].Version)
	}
	if v > refs[0].Version && v < refs[len(refs)-1].Version {
		return fmt.Sprintf("version %d is missing (the table has %s)", v, have)
	}
	return fmt.Sprintf("the table has %s", have)
}

// versionRanges prints sorted versions compactly: "1-2, 4-5", "3", "1-17".
func versionRanges(refs []VersionRef) string {
	var b strings.Builder
	for i := 0; i < len(refs); {
		j := i
		for j+1 < len(refs) && refs[j+1].Version == refs[j].Version+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		if i == j {
			fmt.Fprintf(&b, "%d", refs[i].Version)
		} else {
			fmt.Fprintf(&b, "%d-%d", refs[i].Version, refs[j].Version)
		}
		i = j + 1
	}
	return b.String()
}
