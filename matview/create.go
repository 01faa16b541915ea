package matview

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"

	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/plan"
	"github.com/mvd-project/mvd/vfs"
)

// Definition is what CreateView is asked to build: a select list (nil or
// empty: every source column), a SQL filter ("" : every row) and a row cap
// (nil: none). plan.ParseSelect turns a SQL select list into Select.
type Definition struct {
	Select []plan.Projection
	Where  string
	Limit  *uint64
}

// CreateOption adds to what CreateView writes.
type CreateOption func(*createConfig)

type createConfig struct {
	metadata map[string]string
	lancedb  bool
}

// LanceDBCompatible refuses a definition that LanceDB 0.39 cannot plan
// (plan.LanceDBUnsupported: CASE, CEIL, TRIM(…), …) with ErrInvalid:
// mvd would refresh such a view, LanceDB's own refresh of it fails.
// Without it the view is created; plan.LanceDBUnsupported of its
// definition says what to warn about.
func LanceDBCompatible() CreateOption {
	return func(c *createConfig) { c.lancedb = true }
}

// WithMetadata stores view metadata keys (such as the auto-refresh policy
// keys of package daemon) in the create commit itself, so a view never
// exists without them. The keys follow SetMetadata's rules: they start
// with KeyPrefix and are not a definition or watermark key (ErrInvalid
// otherwise, before anything is written); a key with an empty value is
// left out, as SetMetadata would remove it.
func WithMetadata(kv map[string]string) CreateOption {
	return func(c *createConfig) {
		if c.metadata == nil {
			c.metadata = map[string]string{}
		}
		for k, v := range kv {
			c.metadata[k] = v
		}
	}
}

// CreateView creates view name over table source and commits it empty, as
// LanceDB does: the definition (mv.definition, exactly as LanceDB stores
// it), a fresh mv.incarnation, the view schema with __source_row_id last,
// stable row ids, and the metadata of any WithMetadata option — one
// commit. Every LanceDB create-time validation runs first, with its error
// text; a failed create leaves nothing behind.
func (db *DB) CreateView(ctx context.Context, name, source string, d Definition, opts ...CreateOption) (*View, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var cfg createConfig
	for _, o := range opts {
		o(&cfg)
	}
	for k, val := range cfg.metadata {
		if err := checkUserKey(name, k); err != nil {
			return nil, err
		}
		if val == "" {
			delete(cfg.metadata, k)
		}
	}
	if err := checkName("view", name); err != nil {
		return nil, err
	}
	src, err := db.openTable(ctx, source)
	if err != nil {
		return nil, err
	}
	sm, err := src.Latest(ctx)
	if err != nil {
		return nil, errorf(ErrInvalid, err, "read source table '%s': %v", source, err)
	}
	if !sm.StableRowIDs() {
		return nil, errorf(ErrInvalid, nil, "materialized views require stable row ids on the source table; create '%s' with storage option new_table_enable_stable_row_ids=true (or copy it with `mvd table copy`)", source)
	}
	as, err := sm.Schema.Arrow()
	if err != nil {
		return nil, errorf(ErrUnsupported, err, "source table '%s': %v", source, err)
	}
	p, err := plan.Compile(plan.Definition{Kind: plan.KindSelect, SourceTable: source, Projections: d.Select, Filter: plan.NormalizeFilter(d.Where), Limit: d.Limit}, as)
	if err != nil {
		return nil, errorf(ErrInvalid, err, "%v", err)
	}
	if list := plan.LanceDBUnsupported(p.Definition()); len(list) > 0 && (cfg.lancedb || db.lancedbCompatible) {
		err := plan.LanceDBUnsupportedError(list)
		return nil, errorf(ErrInvalid, err, "%v", err)
	}
	if db.exists(name) {
		return nil, errorf(ErrExists, nil, "Table '%s' already exists", name)
	}
	def := p.Definition()
	raw, err := def.Encode()
	if err != nil {
		return nil, errorf(ErrInvalid, err, "encode the definition of view '%s': %v", name, err)
	}
	ls, err := lance.NewSchemaFromArrow(p.Schema())
	if err != nil {
		return nil, errorf(ErrUnsupported, err, "view '%s': %v", name, err)
	}
	if ls.Metadata == nil {
		ls.Metadata = map[string]string{}
	}
	inc := newIncarnation()
	for k, val := range cfg.metadata {
		ls.Metadata[k] = val
	}
	ls.Metadata[KeyDefinition] = raw
	ls.Metadata[KeyIncarnation] = inc
	if _, _, err := lance.Create(ctx, db.fs, db.root(name), lance.CreateOptions{Schema: ls}); err != nil {
		if errors.Is(err, lance.ErrConflict) {
			return nil, errorf(ErrExists, err, "Table '%s' already exists", name)
		}
		_ = vfs.RemoveAll(db.fs, db.root(name)) // nothing of a failed create stays
		return nil, errorf(ErrInvalid, err, "create view '%s': %v", name, err)
	}
	return db.OpenView(ctx, name)
}

// newIncarnation returns a random UUID (version 4), as LanceDB's
// mv.incarnation.
func newIncarnation() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
