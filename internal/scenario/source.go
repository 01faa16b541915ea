package scenario

// The parsing of source steps: the Source* ops on a source table.

import (
	"fmt"
	"strings"
)

// parseSource reads a `source VERB TABLE …` step.
func parseSource(b Block) (Op, error) {
	if len(b.Words) < 2 {
		return nil, fmt.Errorf("source: missing verb")
	}
	a := newArgs(b, 2)
	table, err := a.positional("table name")
	if err != nil {
		return nil, err
	}
	var op Op
	allowRows := false
	switch verb := b.Words[1]; verb {
	case "create", "append", "upsert", "overwrite":
		op, err = parseSourceRows(a, verb, table)
		allowRows = true
	case "delete":
		var where string
		where, err = a.required("where")
		op = SourceDelete{Table: table, Where: where}
	case "update":
		op, err = parseSourceUpdate(a, table)
	case "delete-by-source":
		op, err = parseSourceDeleteBySource(a, table)
	case "compact":
		op = SourceCompact{Table: table, Cleanup: a.flag("cleanup")}
	case "add-column":
		op, err = parseSourceAddColumn(a, table)
	case "drop-column":
		var name string
		name, err = a.required("name")
		op = SourceDropColumn{Table: table, Name: name}
	case "index":
		op, err = parseSourceIndex(a, table)
	case "drop":
		op = SourceDrop{Table: table}
	case "restore":
		op, err = parseSourceRestore(a, table)
	default:
		return nil, fmt.Errorf("unknown source verb %q", verb)
	}
	if err != nil {
		return nil, err
	}
	return op, a.done(allowRows)
}

// parseSourceRows reads the rows of a source create, append, upsert or
// overwrite; only create and overwrite may have none.
func parseSourceRows(a *argSet, verb, table string) (Op, error) {
	rows, err := a.rows()
	if err != nil {
		return nil, err
	}
	switch verb {
	case "create":
		return SourceCreate{Table: table, Rows: rows, NoStableRowIDs: a.flag("no-stable-row-ids")}, nil
	case "overwrite":
		return SourceOverwrite{Table: table, Rows: rows}, nil
	}
	if rows.Len() == 0 {
		return nil, fmt.Errorf("source %s: no rows (ids=… or JSON rows)", verb)
	}
	if verb == "append" {
		return SourceAppend{Table: table, Rows: rows}, nil
	}
	return SourceUpsert{Table: table, Rows: rows}, nil
}

// parseSourceUpdate reads a source update: an optional where and at
// least one `set column = SQL`.
func parseSourceUpdate(a *argSet, table string) (Op, error) {
	u := SourceUpdate{Table: table}
	u.Where, _ = a.get("where")
	for _, s := range a.all("set") {
		col, expr, ok := strings.Cut(s, "=")
		col, expr = strings.TrimSpace(col), strings.TrimSpace(expr)
		if !ok || col == "" || expr == "" {
			return nil, fmt.Errorf("set: want `column = SQL`, got %q", s)
		}
		u.Set = append(u.Set, [2]string{col, expr})
	}
	if len(u.Set) == 0 {
		return nil, fmt.Errorf("source update: no set")
	}
	return u, nil
}

// parseSourceDeleteBySource reads the ids a source delete-by-source keeps.
func parseSourceDeleteBySource(a *argSet, table string) (Op, error) {
	keep, err := a.required("keep")
	if err != nil {
		return nil, err
	}
	ids, err := parseIDs(keep)
	if err != nil {
		return nil, fmt.Errorf("keep: %w", err)
	}
	return SourceDeleteBySource{Table: table, Keep: ids}, nil
}

// parseSourceAddColumn reads the `column = NAME = SQL` of a source
// add-column.
func parseSourceAddColumn(a *argSet, table string) (Op, error) {
	c, err := a.required("column")
	if err != nil {
		return nil, err
	}
	name, expr, ok := strings.Cut(c, "=")
	name, expr = strings.TrimSpace(name), strings.TrimSpace(expr)
	if !ok || name == "" || expr == "" {
		return nil, fmt.Errorf("column: want `NAME = SQL`, got %q", c)
	}
	return SourceAddColumn{Table: table, Name: name, SQL: expr}, nil
}

// parseSourceIndex reads the column and the optional type of a source
// index.
func parseSourceIndex(a *argSet, table string) (Op, error) {
	col, err := a.required("column")
	if err != nil {
		return nil, err
	}
	typ, _ := a.get("type")
	return SourceIndex{Table: table, Column: col, Type: typ}, nil
}

// parseSourceRestore reads the version a source restore goes back to.
func parseSourceRestore(a *argSet, table string) (Op, error) {
	v, err := a.uint("version")
	if err != nil {
		return nil, err
	}
	if v == nil {
		return nil, fmt.Errorf("missing version")
	}
	return SourceRestore{Table: table, Version: *v}, nil
}
