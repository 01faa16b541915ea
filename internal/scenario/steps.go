package scenario

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// File is a parsed scenario.
type File struct {
	Name  string
	Steps []Step
}

// Engine says which engine performs a view step.
type Engine int

const (
	// Default is the engine under test (mvd in matview's runner).
	Default Engine = iota
	// LanceDB means LanceDB performs the step in every runner (a
	// directive prefixed "lancedb"), for interop scenarios.
	LanceDB
)

// Step is one command with its expected outputs.
type Step struct {
	Pos    Pos
	Line   string // the directive as written
	Engine Engine
	Op     Op
	// Want is the expected outcome (mvd's intended behaviour).
	Want Expect
	// WantLanceDB is what LanceDB does instead, when it differs ("lancedb:"
	// lines); nil when LanceDB behaves as Want says.
	WantLanceDB *Expect
}

// ForLanceDB returns what a LanceDB runner must see: WantLanceDB if given,
// else Want, without its version field for refresh steps (LanceDB commits
// two view versions per refresh, mvd one).
func (s Step) ForLanceDB() Expect {
	if s.WantLanceDB != nil {
		return *s.WantLanceDB
	}
	if _, ok := s.Op.(Refresh); ok {
		return s.Want.without("version")
	}
	return s.Want
}

// Op is one of the step types below.
type Op interface{ isOp() }

// Rows are the rows a source step writes: the standard source rows
// (lancedbtest.SourceRow) for IDs under Variant, then explicit rows given
// as JSON objects (numbers as json.Number, exact).
type Rows struct {
	IDs     []int64
	Variant int
	JSON    []map[string]any
}

// Len is the number of rows.
func (r Rows) Len() int { return len(r.IDs) + len(r.JSON) }

// Source steps: LanceDB writes a table in every runner (a source, or a
// view when a scenario has LanceDB maintain or tamper with it).
type (
	// SourceCreate: `source create T [ids=…] [variant=N] [no-stable-row-ids]`
	// + JSON rows. The standard source schema; output `version=N`.
	SourceCreate struct {
		Table          string
		Rows           Rows
		NoStableRowIDs bool
	}
	// SourceAppend: `source append T ids=… [variant=N]` + JSON rows.
	SourceAppend struct {
		Table string
		Rows  Rows
	}
	// SourceDelete: `source delete T` + `where: SQL`.
	SourceDelete struct{ Table, Where string }
	// SourceUpdate: `source update T` + `set: col = SQL` (one or more) +
	// optional `where: SQL`.
	SourceUpdate struct {
		Table string
		Set   [][2]string
		Where string
	}
	// SourceUpsert: `source upsert T ids=… [variant=N]` + JSON rows: a
	// merge_insert on id, updating matched rows and inserting the rest.
	SourceUpsert struct {
		Table string
		Rows  Rows
	}
	// SourceDeleteBySource: `source delete-by-source T keep=…`: a
	// merge_insert on id whose data holds the kept ids and whose only
	// clause deletes every other row.
	SourceDeleteBySource struct {
		Table string
		Keep  []int64
	}
	// SourceCompact: `source compact T [cleanup]` (optimize; with cleanup,
	// every version but the newest is removed).
	SourceCompact struct {
		Table   string
		Cleanup bool
	}
	// SourceAddColumn: `source add-column T` + `column: NAME = SQL`.
	SourceAddColumn struct{ Table, Name, SQL string }
	// SourceDropColumn: `source drop-column T name=C`.
	SourceDropColumn struct{ Table, Name string }
	// SourceOverwrite: `source overwrite T ids=… [variant=N]` + JSON rows.
	SourceOverwrite struct {
		Table string
		Rows  Rows
	}
	// SourceIndex: `source index T column=C [type=btree|bitmap|label_list]`:
	// a scalar index (on a view too: LanceDB maintaining it).
	SourceIndex struct{ Table, Column, Type string }
	// SourceDrop: `source drop T`; output `ok`.
	SourceDrop struct{ Table string }
	// SourceRestore: `source restore T version=N`.
	SourceRestore struct {
		Table   string
		Version uint64
	}
)

// View steps: the engine under test performs them (LanceDB when prefixed
// "lancedb").
type (
	// ViewCreate: `view create V source=T` + optional `select: SQL list`,
	// `where: SQL`, `limit: N`; output `ok`.
	ViewCreate struct {
		Name, Source string
		Select       *string // nil: every source column
		Where        *string
		Limit        *uint64
	}
	// ViewDrop: `view drop V [if-exists]`; output `ok`.
	ViewDrop struct {
		Name     string
		IfExists bool
	}
	// ViewList: `view list`; output the names, sorted, space-separated, or
	// `(none)`.
	ViewList struct{}
	// ViewShow: `view show V`; output the definition as LanceDB's Node
	// definition() returns it, as one JSON line (compared as JSON).
	ViewShow struct{ Name string }
	// Refresh: `refresh V [full] [cascade] [source_version=N]`; output
	// `mode=M rows_written=N source_version=S version=V` (FormatRefresh) of
	// V; only the fields the expectation names are compared. With cascade
	// the views V reads from (transitively) are refreshed first, in
	// dependency order (mvd view refresh --cascade).
	Refresh struct {
		Name          string
		Full          bool
		Cascade       bool
		SourceVersion *uint64
	}
	// Check: `check V`; output `ok` when the view holds exactly its
	// definition evaluated on its source at the source version of the
	// view's last refresh (with a limit: a subset of size min(limit, n)).
	Check struct{ Name string }
	// Count: `count V`; output `rows=N`.
	Count struct{ Name string }
)

func (SourceCreate) isOp()         {}
func (SourceAppend) isOp()         {}
func (SourceDelete) isOp()         {}
func (SourceUpdate) isOp()         {}
func (SourceUpsert) isOp()         {}
func (SourceDeleteBySource) isOp() {}
func (SourceCompact) isOp()        {}
func (SourceAddColumn) isOp()      {}
func (SourceDropColumn) isOp()     {}
func (SourceOverwrite) isOp()      {}
func (SourceIndex) isOp()          {}
func (SourceDrop) isOp()           {}
func (SourceRestore) isOp()        {}
func (ViewCreate) isOp()           {}
func (ViewDrop) isOp()             {}
func (ViewList) isOp()             {}
func (ViewShow) isOp()             {}
func (Refresh) isOp()              {}
func (Check) isOp()                {}
func (Count) isOp()                {}

// IsSource reports whether op is a source step (performed by LanceDB in
// every runner).
func IsSource(op Op) bool {
	switch op.(type) {
	case SourceCreate, SourceAppend, SourceDelete, SourceUpdate, SourceUpsert, SourceDeleteBySource,
		SourceCompact, SourceAddColumn, SourceDropColumn, SourceOverwrite, SourceIndex, SourceDrop, SourceRestore:
		return true
	}
	return false
}

// Parse parses a scenario; name is used in positions.
func Parse(name string, src []byte) (*File, error) {
	blocks, err := Blocks(name, src)
	if err != nil {
		return nil, err
	}
	f := &File{Name: name}
	for _, b := range blocks {
		s, err := parseStep(b)
		if err != nil {
			return nil, fmt.Errorf("%s: %q: %w", b.Pos, b.Line, err)
		}
		f.Steps = append(f.Steps, s)
	}
	return f, nil
}

// maxIDs bounds an id list, so a typo cannot ask for a billion rows.
const maxIDs = 1 << 20

func parseStep(b Block) (Step, error) {
	s := Step{Pos: b.Pos, Line: b.Line}
	w := b.Words
	if len(w) > 0 && w[0] == "lancedb" {
		s.Engine = LanceDB
		w = w[1:]
		b.Words = w
	}
	if len(w) == 0 {
		return s, fmt.Errorf("empty directive")
	}
	var err error
	switch w[0] {
	case "source":
		if s.Engine == LanceDB {
			return s, fmt.Errorf("source steps are always LanceDB's: drop the prefix")
		}
		s.Op, err = parseSource(b)
	case "view":
		s.Op, err = parseView(b)
	case "refresh", "check", "count":
		s.Op, err = parseViewVerb(b)
	default:
		err = fmt.Errorf("unknown command %q", w[0])
	}
	if err != nil {
		return s, err
	}
	s.Want, s.WantLanceDB, err = parseExpected(b.Expected)
	return s, err
}

// argSet is a block's arguments, consumed by key; leftovers are errors.
type argSet struct {
	args []Arg
	used []bool
	rest []string // input lines that are not "key: value"
}

func newArgs(b Block, n int) *argSet {
	a, rest := b.args(n)
	return &argSet{args: a, used: make([]bool, len(a)), rest: rest}
}

func (a *argSet) get(key string) (string, bool) {
	for i, x := range a.args {
		if x.Key == key && !a.used[i] {
			a.used[i] = true
			return x.Value, true
		}
	}
	return "", false
}

func (a *argSet) all(key string) []string {
	var out []string
	for {
		v, ok := a.get(key)
		if !ok {
			return out
		}
		out = append(out, v)
	}
}

func (a *argSet) flag(key string) bool {
	for i, x := range a.args {
		if x.Key == key && x.Bare && !a.used[i] {
			a.used[i] = true
			return true
		}
	}
	return false
}

// positional takes the first unused bare word.
func (a *argSet) positional(what string) (string, error) {
	for i, x := range a.args {
		if x.Bare && !a.used[i] {
			a.used[i] = true
			return x.Key, nil
		}
	}
	return "", fmt.Errorf("missing %s", what)
}

func (a *argSet) required(key string) (string, error) {
	v, ok := a.get(key)
	if !ok || v == "" {
		return "", fmt.Errorf("missing %s", key)
	}
	return v, nil
}

func (a *argSet) done(allowRows bool) error {
	for i, x := range a.args {
		if !a.used[i] {
			if x.Bare {
				return fmt.Errorf("unexpected word %q", x.Key)
			}
			return fmt.Errorf("unknown argument %q", x.Key)
		}
	}
	if !allowRows && len(a.rest) > 0 {
		return fmt.Errorf("unexpected input line %q", a.rest[0])
	}
	return nil
}

func (a *argSet) uint(key string) (*uint64, error) {
	v, ok := a.get(key)
	if !ok {
		return nil, nil
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return nil, fmt.Errorf("%s: %q is not a non-negative integer", key, v)
	}
	return &n, nil
}

// rows reads ids=, variant= and the JSON rows of the input.
func (a *argSet) rows() (Rows, error) {
	var r Rows
	if v, ok := a.get("ids"); ok {
		ids, err := parseIDs(v)
		if err != nil {
			return r, fmt.Errorf("ids: %w", err)
		}
		r.IDs = ids
	}
	if v, ok := a.get("variant"); ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > 1<<20 {
			return r, fmt.Errorf("variant: %q is not a small non-negative integer", v)
		}
		r.Variant = n
	}
	for _, l := range a.rest {
		if !strings.HasPrefix(l, "{") {
			return r, fmt.Errorf("unexpected input line %q (rows are JSON objects)", l)
		}
		dec := json.NewDecoder(bytes.NewReader([]byte(l)))
		dec.UseNumber()
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			return r, fmt.Errorf("row %s: %w", l, err)
		}
		if dec.More() {
			return r, fmt.Errorf("row %s: text after the object", l)
		}
		r.JSON = append(r.JSON, m)
	}
	a.rest = nil
	return r, nil
}

// parseIDs reads "3", "0..11" (inclusive) and comma-separated lists of
// those.
func parseIDs(s string) ([]int64, error) {
	var out []int64
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(part, "..")
		a, err := strconv.ParseInt(lo, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not an id", lo)
		}
		b := a
		if isRange {
			if b, err = strconv.ParseInt(hi, 10, 64); err != nil {
				return nil, fmt.Errorf("%q is not an id", hi)
			}
			if b < a {
				return nil, fmt.Errorf("empty range %s", part)
			}
		}
		if uint64(b-a) >= maxIDs || len(out)+int(b-a)+1 > maxIDs {
			return nil, fmt.Errorf("more than %d ids", maxIDs)
		}
		for id := a; ; id++ {
			out = append(out, id)
			if id == b {
				break
			}
		}
	}
	return out, nil
}

func parseView(b Block) (Op, error) {
	if len(b.Words) < 2 {
		return nil, fmt.Errorf("view: missing verb")
	}
	a := newArgs(b, 2)
	if b.Words[1] == "list" {
		return ViewList{}, a.done(false)
	}
	name, err := a.positional("view name")
	if err != nil {
		return nil, err
	}
	var op Op
	switch verb := b.Words[1]; verb {
	case "create":
		c := ViewCreate{Name: name}
		if c.Source, err = a.required("source"); err != nil {
			return nil, err
		}
		if v, ok := a.get("select"); ok {
			c.Select = &v
		}
		if v, ok := a.get("where"); ok {
			c.Where = &v
		}
		if c.Limit, err = a.uint("limit"); err != nil {
			return nil, err
		}
		op = c
	case "drop":
		op = ViewDrop{Name: name, IfExists: a.flag("if-exists")}
	case "show":
		op = ViewShow{Name: name}
	default:
		return nil, fmt.Errorf("unknown view verb %q", verb)
	}
	return op, a.done(false)
}

func parseViewVerb(b Block) (Op, error) {
	a := newArgs(b, 1)
	name, err := a.positional("view name")
	if err != nil {
		return nil, err
	}
	var op Op
	switch b.Words[0] {
	case "refresh":
		r := Refresh{Name: name, Full: a.flag("full"), Cascade: a.flag("cascade")}
		if r.SourceVersion, err = a.uint("source_version"); err != nil {
			return nil, err
		}
		op = r
	case "check":
		op = Check{Name: name}
	case "count":
		op = Count{Name: name}
	}
	return op, a.done(false)
}
