package lance

import (
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/mvd-project/mvd/lance/datafile"
)

// logicalToArrow maps a Lance logical type string (lance-format.md §1.7) to
// an Arrow type. children are the field's child fields (list items, struct
// members). Leaf types are mapped by datafile.LogicalType, the one table of
// them; this function adds the nesting the schema tree carries. Unknown
// strings are refused, never guessed.
func logicalToArrow(lt string, children []*Field) (arrow.DataType, error) {
	head, rest, _ := strings.Cut(lt, ":")
	switch {
	case head == "struct" && rest == "":
		fields := make([]arrow.Field, len(children))
		for i, c := range children {
			af, err := c.Arrow()
			if err != nil {
				return nil, err
			}
			fields[i] = af
		}
		return arrow.StructOf(fields...), nil
	case rest == "" && (head == "list" || head == "list.struct" || head == "large_list" || head == "large_list.struct"):
		if len(children) != 1 {
			return nil, corruptf("list type %q has %d child fields, want 1", lt, len(children))
		}
		item, err := children[0].Arrow()
		if err != nil {
			return nil, err
		}
		if strings.HasPrefix(head, "large_") {
			return arrow.LargeListOfField(item), nil
		}
		return arrow.ListOfField(item), nil
	case head == "fixed_size_list" && len(children) == 1:
		// Lance normally stores no child for an FSL (datafile.LogicalType
		// covers that); when one is there, it describes the items.
		i := strings.LastIndexByte(rest, ':')
		n, err := strconv.ParseInt(rest[i+1:], 10, 32)
		if i < 0 || err != nil || n <= 0 {
			return nil, unsupportedf("logical type %q", lt)
		}
		item, err := children[0].Arrow()
		if err != nil {
			return nil, err
		}
		return arrow.FixedSizeListOfField(int32(n), item), nil
	}
	if len(children) != 0 {
		return nil, corruptf("type %q has %d child fields", lt, len(children))
	}
	dt, err := datafile.LogicalType(lt)
	if err != nil {
		return nil, unsupportedf("%v", err)
	}
	return dt, nil
}
