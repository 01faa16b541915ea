package lancedbtest

import (
	"slices"
	"time"

	"github.com/mvd-project/mvd/arrowjson"
)

// CreateOptions are the less common options of CreateTableWith.
type CreateOptions struct {
	// NoStableRowIDs creates the table without stable row ids (views
	// refuse such a source).
	NoStableRowIDs bool
	// Overwrite replaces an existing table of that name.
	Overwrite bool
	// StorageOptions are passed to LanceDB as they are.
	StorageOptions map[string]string
}

// CreateTable creates table name with the schema (canonical form; metadata
// kept) and rows, with stable row ids, and returns its version.
func (d *Driver) CreateTable(name string, schema arrowjson.Schema, rows []Record) (uint64, error) {
	return d.CreateTableWith(name, schema, rows, CreateOptions{})
}

// CreateTableWith is CreateTable with options.
func (d *Driver) CreateTableWith(name string, schema arrowjson.Schema, rows []Record, o CreateOptions) (uint64, error) {
	args := map[string]any{"name": name, "schema": schema, "rows": encodeRows(rows), "stable_row_ids": !o.NoStableRowIDs}
	if o.Overwrite {
		args["mode"] = "overwrite"
	}
	if o.StorageOptions != nil {
		args["storage_options"] = o.StorageOptions
	}
	return d.versionOf("create_table", args)
}

// Add appends rows (converted with the table's current schema; missing
// columns are null) and returns the new version.
func (d *Driver) Add(table string, rows []Record) (uint64, error) {
	return d.versionOf("add", map[string]any{"table": table, "rows": encodeRows(rows)})
}

// Hold keeps table open in the driver until Release (or DropTable): its
// later writes (Add, Delete, Update, …) and reads go through that one
// handle, as a long-lived writer's do, instead of opening the table (a
// listing of its versions and a read of its manifest) for each call. The
// handle sees the commits made through it; another writer's commits only
// as LanceDB's write path finds them.
func (d *Driver) Hold(table string) error {
	return d.Call("hold", map[string]any{"table": table}, nil)
}

// Release ends Hold: the table is opened afresh for each call again.
func (d *Driver) Release(table string) error {
	return d.Call("release", map[string]any{"table": table}, nil)
}

// Overwrite replaces every row of the table (same schema) with rows: a
// Lance Overwrite commit.
func (d *Driver) Overwrite(table string, rows []Record) (uint64, error) {
	return d.versionOf("add", map[string]any{"table": table, "rows": encodeRows(rows), "mode": "overwrite"})
}

// Delete deletes the rows matching the SQL predicate.
func (d *Driver) Delete(table, where string) (uint64, error) {
	return d.versionOf("delete", map[string]any{"table": table, "where": where})
}

// UpdateResult is what an update reports.
type UpdateResult struct {
	Version     uint64 `json:"version"`
	RowsUpdated uint64 `json:"rows_updated"`
}

// Update sets columns to SQL expressions on the rows matching where ("" =
// every row).
func (d *Driver) Update(table, where string, values map[string]string) (UpdateResult, error) {
	args := map[string]any{"table": table, "values": values}
	if where != "" {
		args["where"] = where
	}
	var r UpdateResult
	err := d.Call("update", args, &r)
	return r, err
}

// MergeInsert describes one merge_insert: rows keyed on On, with the
// clauses that are set.
type MergeInsert struct {
	On                       string
	Rows                     []Record
	MatchedUpdate            bool   // whenMatchedUpdateAll
	NotMatchedInsert         bool   // whenNotMatchedInsertAll
	NotMatchedBySourceDelete bool   // whenNotMatchedBySourceDelete
	BySourceWhere            string // its optional filter
}

// MergeResult is what a merge_insert reports.
type MergeResult struct {
	Version  uint64 `json:"version"`
	Inserted uint64 `json:"inserted"`
	Updated  uint64 `json:"updated"`
	Deleted  uint64 `json:"deleted"`
}

// Merge runs a merge_insert.
func (d *Driver) Merge(table string, m MergeInsert) (MergeResult, error) {
	args := map[string]any{
		"table": table, "on": m.On, "rows": encodeRows(m.Rows),
		"matched_update": m.MatchedUpdate, "not_matched_insert": m.NotMatchedInsert,
		"not_matched_by_source_delete": m.NotMatchedBySourceDelete,
	}
	if m.BySourceWhere != "" {
		args["by_source_where"] = m.BySourceWhere
	}
	var r MergeResult
	err := d.Call("merge_insert", args, &r)
	return r, err
}

// Upsert is a merge_insert on `on` that updates matched rows and inserts
// the others.
func (d *Driver) Upsert(table, on string, rows []Record) (MergeResult, error) {
	return d.Merge(table, MergeInsert{On: on, Rows: rows, MatchedUpdate: true, NotMatchedInsert: true})
}

// DeleteBySource is a merge_insert on `on` whose only clause deletes the
// table's rows that rows do not match.
func (d *Driver) DeleteBySource(table, on string, rows []Record) (MergeResult, error) {
	return d.Merge(table, MergeInsert{On: on, Rows: rows, NotMatchedBySourceDelete: true})
}

// Optimize compacts the table (LanceDB's optimize: compaction, index
// optimization, no cleanup of old versions).
func (d *Driver) Optimize(table string) (uint64, error) {
	return d.versionOf("optimize", map[string]any{"table": table})
}

// OptimizeCleanup is Optimize that also removes versions older than
// olderThan (0: every version but the latest ones optimize writes).
func (d *Driver) OptimizeCleanup(table string, olderThan time.Duration) (uint64, error) {
	return d.versionOf("optimize", map[string]any{"table": table, "cleanup_older_than_ms": olderThan.Milliseconds()})
}

// Column is a new column and the SQL that fills it.
type Column struct {
	Name string `json:"name"`
	SQL  string `json:"value_sql"`
}

// AddColumns adds columns computed by SQL (a Lance Merge commit).
func (d *Driver) AddColumns(table string, cols ...Column) (uint64, error) {
	return d.versionOf("add_columns", map[string]any{"table": table, "columns": cols})
}

// DropColumns drops columns.
func (d *Driver) DropColumns(table string, cols ...string) (uint64, error) {
	return d.versionOf("drop_columns", map[string]any{"table": table, "columns": cols})
}

// CreateIndex creates a scalar index ("btree" when indexType is "",
// "bitmap", "label_list") on column.
func (d *Driver) CreateIndex(table, column, indexType string) (uint64, error) {
	args := map[string]any{"table": table, "column": column}
	if indexType != "" {
		args["index_type"] = indexType
	}
	return d.versionOf("create_index", args)
}

// Index is one entry of ListIndices.
type Index struct {
	Name    string   `json:"name"`
	Type    string   `json:"type"`
	Columns []string `json:"columns"`
}

// ListIndices lists the table's indices.
func (d *Driver) ListIndices(table string) ([]Index, error) {
	var r []Index
	err := d.Call("list_indices", map[string]any{"table": table}, &r)
	return r, err
}

// CreateTag tags version of table (LanceDB's tags().create: the file
// _refs/tags/NAME.json, which cleanup must honour).
func (d *Driver) CreateTag(table, name string, version uint64) error {
	return d.Call("tag_create", map[string]any{"table": table, "name": name, "version": version}, nil)
}

// Restore makes version the latest again (a Lance Restore commit).
func (d *Driver) Restore(table string, version uint64) (uint64, error) {
	return d.versionOf("restore", map[string]any{"table": table, "version": version})
}

// DropTable drops a table (or view).
func (d *Driver) DropTable(name string) error {
	return d.Call("drop_table", map[string]any{"name": name}, nil)
}

// TableNames lists the database's tables (views included).
func (d *Driver) TableNames() ([]string, error) {
	var r []string
	err := d.Call("table_names", nil, &r)
	return r, err
}

// Version returns the table's latest version.
func (d *Driver) Version(table string) (uint64, error) {
	var v uint64
	err := d.Call("version", map[string]any{"table": table}, &v)
	return v, err
}

// Versions lists the table's versions.
func (d *Driver) Versions(table string) ([]uint64, error) {
	var v []uint64
	err := d.Call("versions", map[string]any{"table": table}, &v)
	return v, err
}

// Schema returns the table's schema at version (0 = latest), with its
// metadata (a view's mv.* keys among them).
func (d *Driver) Schema(table string, version uint64) (arrowjson.Schema, error) {
	args := map[string]any{"table": table}
	if version > 0 {
		args["version"] = version
	}
	var s arrowjson.Schema
	err := d.Call("schema", args, &s)
	return s, err
}

// Count returns countRows at version (0 = latest).
func (d *Driver) Count(table string, version uint64) (uint64, error) {
	args := map[string]any{"table": table}
	if version > 0 {
		args["version"] = version
	}
	var n uint64
	err := d.Call("count", args, &n)
	return n, err
}

// ReadOptions select what Read returns.
type ReadOptions struct {
	Version uint64   // 0 = latest; else table.checkout(Version)
	RowID   bool     // add _rowid
	Special bool     // add _rowid, _rowaddr, _row_created_at_version, _row_last_updated_at_version
	Columns []string // nil = every column, in schema order
	Where   string   // optional SQL filter
}

// Scan is what Read returns: the version read, its schema and its rows in
// LanceDB's scan order.
type Scan struct {
	Version uint64           `json:"version"`
	Schema  arrowjson.Schema `json:"schema"`
	Rows    []Row            `json:"rows"`
}

// Read reads every row of a table or view with LanceDB.
func (d *Driver) Read(table string, o ReadOptions) (*Scan, error) {
	args := map[string]any{"table": table, "row_id": o.RowID, "special": o.Special}
	if o.Version > 0 {
		args["version"] = o.Version
	}
	if o.Columns != nil {
		args["columns"] = o.Columns
	}
	if o.Where != "" {
		args["where"] = o.Where
	}
	var s Scan
	if err := d.Call("read", args, &s); err != nil {
		return nil, err
	}
	return &s, nil
}

// Projection is one item of a view's select list: Expr "" means the bare
// column name Name (which LanceDB backtick-quotes); otherwise Name is the
// output and Expr its SQL.
type Projection struct {
	Name string
	Expr string
}

// ViewSpec is what createMaterializedView receives. Select nil = every
// source column; Limit nil = no limit.
type ViewSpec struct {
	Select []Projection
	Where  string
	Limit  *uint64
}

// Limit returns a pointer to n, for ViewSpec.Limit.
func Limit(n uint64) *uint64 { return &n }

// Definition is a view's definition as LanceDB's Node definition() returns
// it.
type Definition struct {
	SourceTable     string      `json:"sourceTable"`
	Projections     [][2]string `json:"projections"`
	Filter          *string     `json:"filter,omitempty"`
	Limit           *uint64     `json:"limit,omitempty"`
	Inputs          []string    `json:"inputs"`
	SourceNamespace []string    `json:"sourceNamespace"`
}

// CreateView creates a materialized view with LanceDB and returns its
// definition.
func (d *Driver) CreateView(name, source string, spec ViewSpec) (Definition, error) {
	args := map[string]any{"name": name, "source": source}
	if spec.Select != nil {
		sel := make([]any, len(spec.Select))
		for i, p := range spec.Select {
			if p.Expr == "" {
				sel[i] = p.Name
			} else {
				sel[i] = [2]string{p.Name, p.Expr}
			}
		}
		args["select"] = sel
	}
	if spec.Where != "" {
		args["where"] = spec.Where
	}
	if spec.Limit != nil {
		args["limit"] = *spec.Limit
	}
	var def Definition
	err := d.Call("create_view", args, &def)
	return def, err
}

// CreateViewRaw passes options to createMaterializedView as they are (for
// LanceDB's own validation of odd select/limit values).
func (d *Driver) CreateViewRaw(name, source string, options map[string]any) (Definition, error) {
	args := map[string]any{"name": name, "source": source}
	for k, v := range options {
		args[k] = v
	}
	var def Definition
	err := d.Call("create_view", args, &def)
	return def, err
}

// ViewDefinition opens a view with openMaterializedView and returns
// definition().
func (d *Driver) ViewDefinition(name string) (Definition, error) {
	var def Definition
	err := d.Call("view_definition", map[string]any{"name": name}, &def)
	return def, err
}

// RefreshOptions are refresh()'s options. SourceVersion nil = latest.
type RefreshOptions struct {
	Full          bool
	SourceVersion *uint64
}

// Version returns a pointer to v, for RefreshOptions.SourceVersion.
func Version(v uint64) *uint64 { return &v }

// RefreshResult is refresh()'s result, in mvd's JSON spelling.
type RefreshResult struct {
	Mode          string `json:"mode"`
	RowsWritten   uint64 `json:"rows_written"`
	SourceVersion uint64 `json:"source_version"`
	Version       uint64 `json:"version"`
}

// Refresh refreshes a view with LanceDB's own refresh (a fresh
// openMaterializedView handle each time).
func (d *Driver) Refresh(name string, o RefreshOptions) (RefreshResult, error) {
	args := map[string]any{"name": name}
	if o.Full {
		args["full"] = true
	}
	if o.SourceVersion != nil {
		args["source_version"] = *o.SourceVersion
	}
	var r RefreshResult
	err := d.Call("refresh", args, &r)
	return r, err
}

// ListViews returns listMaterializedViews().
func (d *Driver) ListViews() ([]string, error) {
	var r []string
	err := d.Call("list_views", nil, &r)
	return r, err
}

// ResetPeakRSS resets the LanceDB process's peak RSS counter (Linux
// clear_refs), so PeakRSS measures from here.
func (d *Driver) ResetPeakRSS() error { return d.Call("rss_reset", nil, nil) }

// RSS is the LanceDB process's resident set size and its peak, in bytes.
type RSS struct {
	Current uint64
	Peak    uint64
}

// PeakRSS returns the LanceDB process's RSS and peak RSS since the last
// ResetPeakRSS (or its start).
func (d *Driver) PeakRSS() (RSS, error) {
	var r struct {
		RSS  uint64 `json:"rss_kb"`
		Peak uint64 `json:"peak_kb"`
	}
	err := d.Call("rss", nil, &r)
	return RSS{Current: r.RSS << 10, Peak: r.Peak << 10}, err
}

func (d *Driver) versionOf(cmd string, args map[string]any) (uint64, error) {
	var r struct {
		Version uint64 `json:"version"`
	}
	err := d.Call(cmd, args, &r)
	return r.Version, err
}

func sortedKeys(r Row) []string {
	keys := make([]string, 0, len(r))
	for k := range r {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
