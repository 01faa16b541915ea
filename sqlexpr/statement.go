package sqlexpr

import (
	"strconv"
)

// Statement is a parsed view or job statement: *CreateView, *AlterView,
// *RefreshView, *DropView, *ShowViews, *DescribeView, *ShowJobs,
// *DescribeJob or *CancelJob.
type Statement interface {
	statement()
}

// Projection is one item of a SELECT list.
type Projection struct {
	// Output is the column name: the alias, else the column name of a
	// bare column reference, else the expression text.
	Output string
	// Expr is the parsed expression.
	Expr Expr
	// SQL is the expression exactly as written, which is what LanceDB
	// stores in a view definition.
	SQL string
}

// CreateView is CREATE MATERIALIZED VIEW [IF NOT EXISTS] name [WITH
// (policy options)] AS SELECT … FROM source [WHERE …] [LIMIT n].
type CreateView struct {
	Name string
	// NamePos and SourcePos are the offsets of the view's and the
	// source's names.
	NamePos   int
	Source    string
	SourcePos int
	// SelectPos and WherePos are the offsets of SELECT and of WHERE (0
	// without WHERE).
	SelectPos int
	WherePos  int
	// IfNotExists makes an existing view no error (nothing is changed).
	IfNotExists bool
	// Policy holds the WITH options (all nil without WITH).
	Policy PolicyOptions
	// Projections is empty for SELECT *, meaning every source column.
	Projections []Projection
	// Filter is nil without WHERE; FilterSQL is its text as written.
	Filter    Expr
	FilterSQL string
	// FilterEmpty marks a WHERE with nothing after it (before LIMIT, ';'
	// or the end), which the caller refuses as LanceDB refuses an empty
	// filter.
	FilterEmpty bool
	// Limit is nil without LIMIT.
	Limit *uint64
}

// RefreshView is REFRESH MATERIALIZED VIEW name [WITH (full, source_version,
// async, cpu_millis, memory_bytes, gpu_count, gpu_class)]. Options not
// given are nil (Full and Async default to false).
type RefreshView struct {
	Name          string
	NamePos       int
	Full          bool
	Async         bool
	SourceVersion *uint64
	CPUMillis     *uint64
	MemoryBytes   *uint64
	GPUCount      *uint64
	GPUClass      *string
	// At holds the offset of each option given, by its lower-case name.
	At map[string]int
}

// DropView is DROP MATERIALIZED VIEW [IF EXISTS] name.
type DropView struct {
	Name     string
	NamePos  int
	IfExists bool
}

// ShowViews is SHOW MATERIALIZED VIEWS.
type ShowViews struct{}

func (*CreateView) statement()   {}
func (*RefreshView) statement()  {}
func (*DropView) statement()     {}
func (*ShowViews) statement()    {}
func (*AlterView) statement()    {}
func (*DescribeView) statement() {}
func (*ShowJobs) statement()     {}
func (*DescribeJob) statement()  {}
func (*CancelJob) statement()    {}

// maxLimit is i64::MAX, the largest limit LanceDB stores.
const maxLimit = 1<<63 - 1

// ParseStatement parses one view DDL statement; a trailing semicolon is
// allowed.
func ParseStatement(src string) (Statement, error) {
	p, err := newParser(src)
	if err != nil {
		return nil, err
	}
	p.src = src
	var st Statement
	t := p.next()
	switch {
	case t.is("CREATE"):
		st, err = p.createView()
	case t.is("REFRESH"):
		st, err = p.refreshView()
	case t.is("DROP"):
		st, err = p.dropView()
	case t.is("SHOW"):
		st, err = p.show()
	case t.is("ALTER"):
		st, err = p.alterView()
	case t.is("DESCRIBE"):
		st, err = p.describe()
	case t.is("CANCEL"):
		st, err = p.cancelJob()
	default:
		return nil, errAt(ErrSyntax, t.pos, "expected CREATE, ALTER, REFRESH, DROP, SHOW, DESCRIBE or CANCEL, found %s", describe(t))
	}
	if err != nil {
		return nil, err
	}
	p.acceptOp(";")
	if err := p.clauseAt(0); err != nil {
		return nil, err
	}
	if t := p.peek(); t.kind != tokEOF {
		return nil, errAt(ErrSyntax, t.pos, "expected end of statement, found %s", describe(t))
	}
	return st, nil
}

// name reads a view or table name: an identifier or backtick-quoted name.
func (p *parser) name(what string) (string, error) {
	n, _, err := p.namePos(what)
	return n, err
}

// namePos is name with the name's offset.
func (p *parser) namePos(what string) (string, int, error) {
	t := p.next()
	if t.kind != tokIdent && t.kind != tokQuoted {
		return "", t.pos, errAt(ErrSyntax, t.pos, "expected a %s name, found %s", what, describe(t))
	}
	return t.text, t.pos, nil
}

// materializedView reads the MATERIALIZED VIEW of a statement's head.
func (p *parser) materializedView() error {
	if err := p.expectKw("MATERIALIZED"); err != nil {
		return err
	}
	return p.expectKw("VIEW")
}

func (p *parser) createView() (Statement, error) {
	if err := p.materializedView(); err != nil {
		return nil, err
	}
	cv := &CreateView{}
	if p.acceptKw("IF") {
		if err := p.expectKw("NOT"); err != nil {
			return nil, err
		}
		if err := p.expectKw("EXISTS"); err != nil {
			return nil, err
		}
		cv.IfNotExists = true
	}
	var err error
	if cv.Name, cv.NamePos, err = p.namePos("view"); err != nil {
		return nil, err
	}
	if p.acceptKw("WITH") {
		if cv.Policy.At, err = p.options(cv.Policy.set); err != nil {
			return nil, err
		}
	}
	if err := p.expectKw("AS"); err != nil {
		return nil, err
	}
	cv.SelectPos = p.peek().pos
	if err := p.expectKw("SELECT"); err != nil {
		return nil, err
	}
	if !p.acceptOp("*") {
		if cv.Projections, err = p.selectList(); err != nil {
			return nil, err
		}
	}
	if err := p.clauseAt(0); err != nil {
		return nil, err
	}
	if err := p.expectKw("FROM"); err != nil {
		return nil, err
	}
	if cv.Source, cv.SourcePos, err = p.namePos("table"); err != nil {
		return nil, err
	}
	if err := p.afterSource(); err != nil {
		return nil, err
	}
	wherePos := p.peek().pos
	where := p.acceptKw("WHERE")
	if where {
		cv.WherePos = wherePos
	}
	if where && (p.peek().kind == tokEOF || p.peek().isOp(";") || p.peek().is("LIMIT")) {
		cv.FilterEmpty = true
	} else if where {
		// The filter reads double quotes as LanceDB's where does.
		p.filterDialect()
		start := p.peek().pos
		if cv.Filter, err = p.expr(0); err != nil {
			return nil, err
		}
		cv.FilterSQL = p.src[start:p.toks[p.i-1].end]
	}
	if p.acceptKw("LIMIT") {
		t := p.next()
		n, err := strconv.ParseUint(t.text, 10, 64)
		if t.kind != tokNumber || err != nil || n > maxLimit {
			return nil, errAt(ErrSyntax, t.pos, "expected a LIMIT between 0 and %d, found %s", uint64(maxLimit), describe(t))
		}
		cv.Limit = &n
	}
	return cv, nil
}

// ParseSelectList parses a projection list such as
// "name, upper(name) AS shout".
func ParseSelectList(src string) ([]Projection, error) {
	p, err := newParser(src)
	if err != nil {
		return nil, err
	}
	p.src = src
	list, err := p.selectList()
	if err != nil {
		return nil, err
	}
	if err := p.clauseAt(0); err != nil {
		return nil, err
	}
	if t := p.peek(); t.kind != tokEOF {
		return nil, errAt(ErrSyntax, t.pos, "expected ',' or end of list, found %s", describe(t))
	}
	return list, nil
}

func (p *parser) selectList() ([]Projection, error) {
	if err := p.distinctAt(); err != nil {
		return nil, err
	}
	var out []Projection
	for {
		start := p.peek().pos
		e, err := p.expr(0)
		if err != nil {
			return nil, err
		}
		pr := Projection{Expr: e, SQL: p.src[start:p.toks[p.i-1].end]}
		switch {
		case p.acceptKw("AS"):
			if pr.Output, err = p.name("column"); err != nil {
				return nil, err
			}
		case p.peek().kind == tokQuoted || (p.peek().kind == tokIdent && !p.peek().is("FROM") && clauseName(p.peek(), p.peekAt(1)) == ""):
			pr.Output = p.next().text
		default:
			if c, ok := e.(*Column); ok {
				pr.Output = c.Path[len(c.Path)-1]
			} else {
				pr.Output = pr.SQL
			}
		}
		out = append(out, pr)
		if !p.acceptOp(",") {
			return out, nil
		}
	}
}

func (p *parser) refreshView() (Statement, error) {
	if err := p.materializedView(); err != nil {
		return nil, err
	}
	rv := &RefreshView{}
	var err error
	if rv.Name, rv.NamePos, err = p.namePos("view"); err != nil {
		return nil, err
	}
	if p.acceptKw("WITH") {
		if rv.At, err = p.options(rv.set); err != nil {
			return nil, err
		}
	}
	return rv, nil
}

// set applies one WITH option.
func (rv *RefreshView) set(key string, k, v token) error {
	num := func() (*uint64, error) { return optUint(key, v) }
	var err error
	switch key {
	case "full":
		rv.Full, err = optBool(key, v)
	case "async":
		rv.Async, err = optBool(key, v)
	case "source_version":
		rv.SourceVersion, err = num()
	case "cpu_millis":
		rv.CPUMillis, err = num()
	case "memory_bytes":
		rv.MemoryBytes, err = num()
	case "gpu_count":
		rv.GPUCount, err = num()
	case "gpu_class":
		if v.kind != tokString {
			return errAt(ErrSyntax, v.pos, "option gpu_class expects a string, found %s", describe(v))
		}
		s := v.text
		rv.GPUClass = &s
	default:
		return errAt(ErrSyntax, k.pos, "unknown option %s; expected full, source_version, async, cpu_millis, memory_bytes, gpu_count or gpu_class", key)
	}
	return err
}

func (p *parser) dropView() (Statement, error) {
	if err := p.materializedView(); err != nil {
		return nil, err
	}
	dv := &DropView{}
	if p.acceptKw("IF") {
		if err := p.expectKw("EXISTS"); err != nil {
			return nil, err
		}
		dv.IfExists = true
	}
	var err error
	dv.Name, dv.NamePos, err = p.namePos("view")
	return dv, err
}
