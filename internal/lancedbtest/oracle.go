package lancedbtest

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mvd-project/mvd/arrowjson"
)

// ShapeView is one view of a ViewShape: its name, source and spec.
type ShapeView struct {
	Name   string
	Source string
	Spec   ViewSpec
}

// ViewShape is a named set of views for one differential run over the
// standard source, to be created in order (a view over a view comes after
// its source); the last one is the view under test.
type ViewShape struct {
	Name  string
	Views []ShapeView
}

// Target returns the view under test (the last view).
func (s ViewShape) Target() ShapeView { return s.Views[len(s.Views)-1] }

// ViewShapes returns the view shapes of issue 10's differential test over
// the standard source (SourceSchema) named source: identity, filtered and
// projected with expressions, limited, and a view over a view.
func ViewShapes(source string) []ViewShape {
	return []ViewShape{
		{Name: "identity", Views: []ShapeView{{Name: "v", Source: source}}},
		{Name: "filtered", Views: []ShapeView{{Name: "v", Source: source, Spec: ViewSpec{
			Select: []Projection{{Name: "id"}, {Name: "name"}, {Name: "shout", Expr: "upper(name)"}, {Name: "cents", Expr: "amount * 100"}},
			Where:  "kind IN ('a', 'b') AND amount > 50",
		}}}},
		{Name: "limited", Views: []ShapeView{{Name: "v", Source: source, Spec: ViewSpec{
			Select: []Projection{{Name: "id"}, {Name: "amount"}},
			Where:  "amount > 30",
			Limit:  Limit(4),
		}}}},
		{Name: "chain", Views: []ShapeView{
			{Name: "up", Source: source, Spec: ViewSpec{
				Select: []Projection{{Name: "id"}, {Name: "kind"}, {Name: "amount"}, {Name: "amount2", Expr: "amount * 2"}},
				Where:  "amount > 20",
			}},
			{Name: "v", Source: "up", Spec: ViewSpec{
				Select: []Projection{{Name: "id"}, {Name: "amount2"}},
				Where:  "kind <> 'c' OR kind IS NULL",
			}},
		}},
	}
}

// Expected evaluates a view definition on its source at version (0 =
// latest) with LanceDB's query engine: the rows the view must hold (all of
// them without a limit; with a limit, the view holds min(limit, len)
// of them). Each row has the definition's outputs and __source_row_id.
func (d *Driver) Expected(def Definition, version uint64) ([]Row, error) {
	rows, _, err := d.expected(def, version, nil)
	return rows, err
}

// ExpectedCapped is Expected with the definition's limit applied by
// LanceDB's query (its first limit rows in scan order: fragment order, then
// offset): exactly the rows a capped view holds, in the order LanceDB's
// refresh writes them.
func (d *Driver) ExpectedCapped(def Definition, version uint64) ([]Row, error) {
	rows, _, err := d.expected(def, version, def.Limit)
	return rows, err
}

// expected also returns the result's schema (nil when LanceDB gave none
// or one without a canonical spelling). A limit (nil: none) is the
// query's.
func (d *Driver) expected(def Definition, version uint64, limit *uint64) ([]Row, *arrowjson.Schema, error) {
	args := map[string]any{"table": def.SourceTable, "projections": def.Projections}
	if version > 0 {
		args["version"] = version
	}
	if def.Filter != nil {
		args["filter"] = *def.Filter
	}
	if limit != nil {
		if *limit == 0 {
			return nil, nil, nil // LanceDB reads a limit of 0 as none; a view capped at 0 holds nothing
		}
		args["limit"] = *limit
	}
	var r struct {
		Rows   []Row             `json:"rows"`
		Schema *arrowjson.Schema `json:"schema"`
	}
	if err := d.Call("evaluate", args, &r); err != nil {
		return nil, nil, err
	}
	return r.Rows, r.Schema, nil
}

// CheckView reads view with LanceDB and checks it holds exactly its
// definition evaluated on the source at sourceVersion (the version its
// refresh reported): every row once; with a limit, row for row and in
// order, the rows LanceDB's query with that limit returns (the first ones
// in scan order, as LanceDB's own refresh holds them); its columns named
// and typed as the definition's query result.
func (d *Driver) CheckView(view string, sourceVersion uint64) error {
	def, err := d.ViewDefinition(view)
	if err != nil {
		return err
	}
	want, schema, err := d.expected(def, sourceVersion, def.Limit)
	if err != nil {
		return fmt.Errorf("evaluate %s at source version %d: %w", view, sourceVersion, err)
	}
	got, err := d.Read(view, ReadOptions{})
	if err != nil {
		return err
	}
	if schema != nil {
		if err := compareTypes(got.Schema, *schema); err != nil {
			return fmt.Errorf("view %s (version %d): %w", view, got.Version, err)
		}
	}
	compare := func() error { return CompareView(got.Rows, want, nil) }
	if def.Limit != nil {
		compare = func() error { return CompareCapped(got.Rows, want) }
	}
	if err := compare(); err != nil {
		return fmt.Errorf("view %s (version %d) vs its definition on %s@%d: %w", view, got.Version, def.SourceTable, sourceVersion, err)
	}
	return nil
}

// CompareCapped checks a capped view's rows against LanceDB's query of its
// definition with the limit (ExpectedCapped): the same rows in the same
// order, over the expected rows' columns (__source_row_id included). The
// error names the first position where they differ and how many rows of
// each side the other lacks.
func CompareCapped(got, want []Row) error {
	var cols []string
	if len(want) > 0 {
		cols = sortedKeys(want[0])
	} else if len(got) > 0 {
		cols = slices.DeleteFunc(sortedKeys(got[0]), func(c string) bool { return strings.HasPrefix(c, "_row") })
	}
	key := func(r Row) string { return r.Key(cols...) }
	first := -1
	for i := 0; i < max(len(got), len(want)); i++ {
		if i >= len(got) || i >= len(want) || key(got[i]) != key(want[i]) {
			first = i
			break
		}
	}
	if first < 0 {
		return nil
	}
	in := func(rows []Row) map[string]bool {
		m := make(map[string]bool, len(rows))
		for _, r := range rows {
			m[key(r)] = true
		}
		return m
	}
	inGot, inWant := in(got), in(want)
	var extra, missing []string
	for _, r := range got {
		if !inWant[key(r)] {
			extra = append(extra, key(r))
		}
	}
	for _, r := range want {
		if !inGot[key(r)] {
			missing = append(missing, key(r))
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d rows, want %d (LanceDB's query with the limit); %d unexpected, %d missing; first difference at row %d",
		len(got), len(want), len(extra), len(missing), first)
	for i, k := range extra {
		if i == 5 {
			fmt.Fprintf(&b, "\n  … %d more unexpected", len(extra)-i)
			break
		}
		fmt.Fprintf(&b, "\n  unexpected %s", k)
	}
	for i, k := range missing {
		if i == 5 {
			fmt.Fprintf(&b, "\n  … %d more missing", len(missing)-i)
			break
		}
		fmt.Fprintf(&b, "\n  missing    %s", k)
	}
	return fmt.Errorf("%s", b.String())
}

// compareTypes checks the view's columns have the names and types (not
// nullability or metadata) of the definition's query result.
func compareTypes(view, query arrowjson.Schema) error {
	if len(view.Fields) != len(query.Fields) {
		return fmt.Errorf("%d columns, its definition gives %d", len(view.Fields), len(query.Fields))
	}
	for i, f := range view.Fields {
		q := query.Fields[i]
		if f.Name != q.Name || typeText(f) != typeText(q) {
			return fmt.Errorf("column %d is %s %s, its definition gives %s %s", i, f.Name, typeText(f), q.Name, typeText(q))
		}
	}
	return nil
}

func typeText(f arrowjson.Field) string {
	if len(f.Children) == 0 {
		return f.Type
	}
	parts := make([]string, len(f.Children))
	for i, c := range f.Children {
		parts[i] = c.Name + " " + typeText(c)
	}
	return f.Type + "<" + strings.Join(parts, ", ") + ">"
}

// CompareView checks view rows against the expected rows of its
// definition (Expected): as multisets over the expected rows' columns,
// equal without a limit; with a limit, got must be a sub-multiset of want
// of size min(limit, len(want)). No __source_row_id may appear twice.
func CompareView(got, want []Row, limit *uint64) error {
	var cols []string
	if len(want) > 0 {
		cols = sortedKeys(want[0])
	} else if len(got) > 0 {
		cols = sortedKeys(got[0])
		cols = slices.DeleteFunc(cols, func(c string) bool { return strings.HasPrefix(c, "_row") })
	}
	seen := map[string]bool{}
	for _, r := range got {
		id := r.Text("__source_row_id")
		if seen[id] {
			return fmt.Errorf("__source_row_id %s appears twice", id)
		}
		seen[id] = true
	}
	wantCount := map[string]int{}
	for _, r := range want {
		wantCount[r.Key(cols...)]++
	}
	var extra []string
	for _, r := range got {
		k := r.Key(cols...)
		if wantCount[k] == 0 {
			extra = append(extra, k)
			continue
		}
		wantCount[k]--
	}
	var missing []string
	for _, r := range want {
		k := r.Key(cols...)
		if wantCount[k] > 0 {
			missing = append(missing, k)
			wantCount[k]--
		}
	}
	size := uint64(len(want))
	if limit != nil && *limit < size {
		size = *limit
	}
	if len(extra) == 0 && uint64(len(got)) == size && (limit != nil || len(missing) == 0) {
		return nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d rows, want %d", len(got), size)
	if limit != nil {
		fmt.Fprintf(&b, " (limit %d of %d)", *limit, len(want))
	}
	for _, k := range extra {
		fmt.Fprintf(&b, "\n  unexpected %s", k)
	}
	if limit == nil {
		for _, k := range missing {
			fmt.Fprintf(&b, "\n  missing    %s", k)
		}
	}
	return fmt.Errorf("%s", b.String())
}
