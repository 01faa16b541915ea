package plan

import (
	"encoding/json"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
)

// Schema metadata keys LanceDB carries from a source to its views.
const (
	EmbeddingFunctionsKey = "embedding_functions"
	ColumnDefinitionsKey  = "lancedb::column_definitions"
)

// declarationKey reports field metadata that declares something about the
// source table itself (primary keys, clustering, field ids, computed
// columns), which LanceDB strips from a view at every nesting depth.
func declarationKey(k string) bool {
	return strings.HasPrefix(k, "lance-schema:") || k == "lance:field_id" ||
		k == "computed_column" || strings.HasPrefix(k, "computed_column.")
}

// stripMetadata returns md without declaration keys.
func stripMetadata(md arrow.Metadata) arrow.Metadata {
	if md.Len() == 0 {
		return arrow.Metadata{}
	}
	var keys, vals []string
	for i, k := range md.Keys() {
		if !declarationKey(k) {
			keys = append(keys, k)
			vals = append(vals, md.Values()[i])
		}
	}
	if len(keys) == 0 {
		return arrow.Metadata{}
	}
	return arrow.NewMetadata(keys, vals)
}

// stripType strips declaration keys from the fields nested in t.
func stripType(t arrow.DataType) arrow.DataType {
	strip := func(f arrow.Field) arrow.Field {
		f.Metadata = stripMetadata(f.Metadata)
		f.Type = stripType(f.Type)
		return f
	}
	switch x := t.(type) {
	case *arrow.StructType:
		fs := x.Fields()
		for i := range fs {
			fs[i] = strip(fs[i])
		}
		return arrow.StructOf(fs...)
	case *arrow.ListType:
		return arrow.ListOfField(strip(x.ElemField()))
	case *arrow.LargeListType:
		return arrow.LargeListOfField(strip(x.ElemField()))
	case *arrow.FixedSizeListType:
		return arrow.FixedSizeListOfField(x.Len(), strip(x.ElemField()))
	case *arrow.MapType:
		kv := x.Elem().(*arrow.StructType)
		k, v := strip(kv.Field(0)), strip(kv.Field(1))
		m := arrow.MapOfWithMetadata(k.Type, k.Metadata, v.Type, v.Metadata)
		m.KeysSorted = x.KeysSorted
		return m
	}
	return t
}

// viewMetadata is the schema metadata a view inherits: embedding function
// entries whose source and vector columns are both projected directly,
// renamed to the view's output names (direct maps a source column to its
// output names, in projection order).
func viewMetadata(src arrow.Metadata, direct map[string][]string, fields []arrow.Field) map[string]string {
	out := map[string]string{}
	if i := src.FindKey(EmbeddingFunctionsKey); i >= 0 {
		if v, ok := carryEmbeddings(src.Values()[i], direct); ok {
			out[EmbeddingFunctionsKey] = v
		}
	}
	return out
}

var (
	sourceKeys = []string{"source_column", "sourceColumn"}
	destKeys   = []string{"vector_column", "dest_column", "vectorColumn", "destColumn"}
)

// carryEmbeddings rewrites an embedding_functions list for the view.
func carryEmbeddings(raw string, direct map[string][]string) (string, bool) {
	var entries []map[string]any
	if err := json.Unmarshal([]byte(raw), &entries); err != nil {
		return "", false
	}
	var kept []map[string]any
	for _, e := range entries {
		sk, sname := findKey(e, sourceKeys)
		dk, dname := findKey(e, destKeys)
		if sk == "" || dk == "" {
			continue
		}
		for _, so := range direct[sname] {
			for _, do := range direct[dname] {
				c := make(map[string]any, len(e))
				for k, v := range e {
					c[k] = v
				}
				c[sk], c[dk] = so, do
				kept = append(kept, c)
			}
		}
	}
	if len(kept) == 0 {
		return "", false
	}
	b, err := json.Marshal(kept) // map keys sorted, as serde re-serializes
	if err != nil {
		return "", false
	}
	return string(b), true
}

func findKey(e map[string]any, keys []string) (string, string) {
	for _, k := range keys {
		if s, ok := e[k].(string); ok {
			return k, s
		}
	}
	return "", ""
}
