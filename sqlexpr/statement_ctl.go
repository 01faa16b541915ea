package sqlexpr

import (
	"strconv"
	"strings"
)

// PolicyOptions are the auto-refresh options of CREATE MATERIALIZED VIEW
// … WITH (…) and ALTER MATERIALIZED VIEW … SET (…), in LanceDB
// Enterprise's names. Options not given are nil.
type PolicyOptions struct {
	// AutoRefreshEnabled is auto_refresh_enabled = true|false.
	AutoRefreshEnabled *bool
	// IntervalSeconds is auto_refresh_interval_seconds = N.
	IntervalSeconds *uint64
	// FreshnessTargetMS is freshness_target_ms = N.
	FreshnessTargetMS *uint64
	// DebounceMS is debounce_ms = N.
	DebounceMS *uint64
	// At holds the offset of each option given, by its lower-case name
	// (nil without options).
	At map[string]int
}

// policyKeys lists the policy options, for the unknown-option error.
const policyKeys = "auto_refresh_enabled, auto_refresh_interval_seconds, freshness_target_ms or debounce_ms"

// set applies one policy option.
func (po *PolicyOptions) set(key string, k, v token) error {
	var err error
	switch key {
	case "auto_refresh_enabled":
		var b bool
		if b, err = optBool(key, v); err == nil {
			po.AutoRefreshEnabled = &b
		}
	case "auto_refresh_interval_seconds":
		po.IntervalSeconds, err = optUint(key, v)
	case "freshness_target_ms":
		po.FreshnessTargetMS, err = optUint(key, v)
	case "debounce_ms":
		po.DebounceMS, err = optUint(key, v)
	default:
		return errAt(ErrSyntax, k.pos, "unknown option %s; expected %s", key, policyKeys)
	}
	return err
}

// AlterView is ALTER MATERIALIZED VIEW name SET (policy options).
type AlterView struct {
	Name    string
	NamePos int
	Policy  PolicyOptions
}

// DescribeView is DESCRIBE MATERIALIZED VIEW name.
type DescribeView struct {
	Name    string
	NamePos int
}

// ShowJobs is SHOW JOBS.
type ShowJobs struct{}

// DescribeJob is DESCRIBE JOB id.
type DescribeJob struct {
	ID    string
	IDPos int
}

// CancelJob is CANCEL JOB id.
type CancelJob struct {
	ID    string
	IDPos int
}

// options parses "(key = value, …)", after WITH or SET, applying each
// option with set and refusing a key given twice. It returns each key's
// offset by its lower-case name.
func (p *parser) options(set func(key string, k, v token) error) (map[string]int, error) {
	if err := p.expectOp("("); err != nil {
		return nil, err
	}
	at := map[string]int{}
	for {
		k := p.next()
		if k.kind != tokIdent {
			return nil, errAt(ErrSyntax, k.pos, "expected an option name, found %s", describe(k))
		}
		key := strings.ToLower(k.text)
		if _, dup := at[key]; dup {
			return nil, errAt(ErrSyntax, k.pos, "option %s given twice", key)
		}
		at[key] = k.pos
		if err := p.expectOp("="); err != nil {
			return nil, err
		}
		if err := set(key, k, p.next()); err != nil {
			return nil, err
		}
		if p.acceptOp(")") {
			return at, nil
		}
		if err := p.expectOp(","); err != nil {
			return nil, err
		}
	}
}

// optBool reads the value of a true|false option.
func optBool(key string, v token) (bool, error) {
	switch {
	case v.is("TRUE"):
		return true, nil
	case v.is("FALSE"):
		return false, nil
	}
	return false, errAt(ErrSyntax, v.pos, "option %s expects true or false, found %s", key, describe(v))
}

// optUint reads the value of a non-negative integer option.
func optUint(key string, v token) (*uint64, error) {
	if v.isOp("-") {
		return nil, errAt(ErrSyntax, v.pos, "option %s must not be negative", key)
	}
	n, err := strconv.ParseUint(v.text, 10, 64)
	if v.kind != tokNumber || err != nil {
		return nil, errAt(ErrSyntax, v.pos, "option %s expects a non-negative integer, found %s", key, describe(v))
	}
	return &n, nil
}

func (p *parser) alterView() (Statement, error) {
	if err := p.materializedView(); err != nil {
		return nil, err
	}
	av := &AlterView{}
	var err error
	if av.Name, av.NamePos, err = p.namePos("view"); err != nil {
		return nil, err
	}
	if err := p.expectKw("SET"); err != nil {
		return nil, err
	}
	av.Policy.At, err = p.options(av.Policy.set)
	return av, err
}

// show parses what follows SHOW: MATERIALIZED VIEWS or JOBS.
func (p *parser) show() (Statement, error) {
	if p.acceptKw("JOBS") {
		return &ShowJobs{}, nil
	}
	if t := p.peek(); !t.is("MATERIALIZED") {
		return nil, errAt(ErrSyntax, t.pos, "expected MATERIALIZED VIEWS or JOBS, found %s", describe(t))
	}
	p.next()
	return &ShowViews{}, p.expectKw("VIEWS")
}

// describe parses what follows DESCRIBE: MATERIALIZED VIEW name or JOB id.
func (p *parser) describe() (Statement, error) {
	if p.acceptKw("JOB") {
		id, pos, err := p.jobID()
		return &DescribeJob{ID: id, IDPos: pos}, err
	}
	if t := p.peek(); !t.is("MATERIALIZED") {
		return nil, errAt(ErrSyntax, t.pos, "expected MATERIALIZED VIEW or JOB, found %s", describe(t))
	}
	if err := p.materializedView(); err != nil {
		return nil, err
	}
	name, pos, err := p.namePos("view")
	return &DescribeView{Name: name, NamePos: pos}, err
}

func (p *parser) cancelJob() (Statement, error) {
	if err := p.expectKw("JOB"); err != nil {
		return nil, err
	}
	id, pos, err := p.jobID()
	return &CancelJob{ID: id, IDPos: pos}, err
}

// jobID reads a job ID: a name, a backtick-quoted name or a string.
func (p *parser) jobID() (string, int, error) {
	t := p.next()
	if (t.kind != tokIdent && t.kind != tokQuoted && t.kind != tokString) || t.text == "" {
		return "", t.pos, errAt(ErrSyntax, t.pos, "expected a job ID, found %s", describe(t))
	}
	return t.text, t.pos, nil
}
