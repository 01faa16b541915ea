package matview

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/mvd-project/mvd/incremental"
	"github.com/mvd-project/mvd/internal/budget"
	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/plan"
	"github.com/mvd-project/mvd/provenance"
	"github.com/mvd-project/mvd/rebuild"
)

// Mode is how a refresh brought the view up to date, as LanceDB reports it.
type Mode string

// Refresh modes.
const (
	ModeRebuild     Mode = "rebuild"
	ModeIncremental Mode = "incremental"
	ModeNoOp        Mode = "no_op"
)

// RefreshOptions tune a refresh.
type RefreshOptions struct {
	// Full forces a rebuild.
	Full bool
	// SourceVersion pins the source version to reflect (nil: the latest).
	// Older than the watermark: the view is rebuilt to that state.
	SourceVersion *uint64
	// Changes is an optional precomputed change set of the source from the
	// view's watermark to the target version (the daemon's, from its
	// watcher). It is used only when its From and To match the refresh and
	// the span holds row-level operations only; otherwise it is computed.
	Changes *lance.ChangeSet
	// Budget caps the refresh's workers and batch memory; it is checked
	// before any work (Budget.Validate) and enforced, not forwarded.
	Budget Budget
	// ViewBudget, with Budget empty, applies the view's default budget
	// (the mv.cpu_millis, … keys of its metadata, BudgetFromMetadata):
	// the daemon's auto-refreshes set it.
	ViewBudget bool
}

// Result is what a refresh did, as LanceDB reports it.
type Result struct {
	Mode Mode `json:"mode"`
	// RowsWritten counts view rows written (evictions do not count).
	RowsWritten uint64 `json:"rows_written"`
	// SourceVersion is the source version the view now reflects.
	SourceVersion uint64 `json:"source_version"`
	// Version is the view's version after the refresh.
	Version uint64 `json:"version"`
	// Reason says why a rebuild was needed ("" otherwise).
	Reason string `json:"-"`
	// Warnings say what went wrong beside the refresh without failing it:
	// its commit landed, and the refresh is reported (a provenance index
	// that could not be saved is rebuilt or caught up by the next one).
	Warnings []string `json:"warnings,omitempty"`
	// SourceCommittedAt is the commit time of the source version the view
	// reflects (its manifest's timestamp, as the watermark records it);
	// zero if unknown.
	SourceCommittedAt time.Time `json:"-"`
}

// AppendJSON appends the result as encoding/json encodes it (without HTML
// escaping): the one line a refresh reports on the command line, written
// without reflection, which costs a shell driving refreshes more than the
// line itself.
func (r *Result) AppendJSON(b []byte) []byte {
	if !plainMode(r.Mode) || len(r.Warnings) > 0 {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(r) // a struct of a string and numbers always encodes
		return append(b, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...)
	}
	b = append(b, `{"mode":"`...)
	b = append(b, r.Mode...)
	b = append(b, `","rows_written":`...)
	b = strconv.AppendUint(b, r.RowsWritten, 10)
	b = append(b, `,"source_version":`...)
	b = strconv.AppendUint(b, r.SourceVersion, 10)
	b = append(b, `,"version":`...)
	b = strconv.AppendUint(b, r.Version, 10)
	return append(b, '}')
}

// plainMode reports whether m needs no escaping in a JSON string.
func plainMode(m Mode) bool {
	for i := 0; i < len(m); i++ {
		if c := m[i]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// Refresh brings the view to its definition evaluated on the source at the
// target version, in one Lance commit holding the rows and the watermark
// (no commit at all for no_op). Incremental whenever the change can be
// reconciled row by row; rebuild when it must (first refresh, Full, an
// overwrite or restore, a type change of a read column, a watermark version
// that is gone, a recreated source, drift on the view).
func (v *View) Refresh(ctx context.Context, o RefreshOptions) (*Result, error) {
	if err := o.Budget.Validate(); err != nil {
		return nil, fmt.Errorf("refresh view '%s': %w", v.name, err)
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	res, err := v.refresh(ctx, o)
	if err != nil {
		return nil, err
	}
	return res, nil
}

// sourceSnapshot opens the source (reusing the last refresh's handle, the
// one the views over that source share: its new manifests are decoded once
// for all of them) and returns the snapshot to reflect: the pinned version or the latest. A
// read through a reused handle that fails is retried once through a fresh
// open, which also reports a dropped source as not found.
// head, if not nil, is the latest version v.src's Head read: its snapshot
// is the latest.
func (v *View) sourceSnapshot(ctx context.Context, def *plan.Definition, o RefreshOptions, head *lance.Head) (*lance.Table, *lance.Snapshot, error) {
	if v.src != nil && v.srcName == def.SourceTable {
		if head != nil {
			// Checked for a gap by the caller (reconcile's checkHead).
			if sm, err := v.src.DecodeHead(ctx, head); err == nil {
				return v.src, sm, nil
			}
		}
		if sm, err := v.sourceAt(ctx, v.src, def, o); err == nil {
			return v.src, sm, nil
		}
		v.src = nil
		v.db.dropHandle(def.SourceTable)
	}
	src, err := v.db.sharedTable(ctx, def.SourceTable)
	if err != nil {
		return nil, nil, errorf(ErrNotFound, err, "refresh view '%s': source table '%s' was not found", v.name, def.SourceTable)
	}
	sm, err := v.sourceAt(ctx, src, def, o)
	if err != nil {
		return nil, nil, err
	}
	v.src, v.srcName = src, def.SourceTable
	return src, sm, nil
}

func (v *View) sourceAt(ctx context.Context, src *lance.Table, def *plan.Definition, o RefreshOptions) (*lance.Snapshot, error) {
	var (
		sm  *lance.Snapshot
		err error
	)
	if o.SourceVersion != nil {
		if *o.SourceVersion == 0 {
			err = lance.ErrVersionNotFound // versions start at 1; 0 is not "latest" here
		} else {
			sm, err = src.Checkout(ctx, *o.SourceVersion)
		}
		if err != nil {
			if errors.Is(err, lance.ErrVersionNotFound) {
				return nil, errorf(ErrNotFound, err, "refresh view '%s': source table '%s' has no version %d (%s/_versions/%d.manifest was not found); the view is untouched", v.name, def.SourceTable, *o.SourceVersion, src.Root(), *o.SourceVersion)
			}
			return nil, errorf(ErrInvalid, err, "refresh view '%s': %v", v.name, err)
		}
	} else if sm, err = src.Latest(ctx); err != nil {
		return nil, errorf(ErrInvalid, err, "refresh view '%s': %v", v.name, err)
	}
	return sm, nil
}

// planFor compiles the stored definition against the source schema at the
// target version (reusing the warm plan when neither changed) and checks
// that it produces the view's schema, as LanceDB does before every refresh.
func (v *View) planFor(def *plan.Definition, vm, sm *lance.Snapshot) (*plan.Plan, error) {
	as, err := sm.Schema.Arrow()
	if err != nil {
		return nil, errorf(ErrUnsupported, err, "refresh view '%s': source schema: %v", v.name, err)
	}
	raw := vm.Schema.Metadata[KeyDefinition]
	// The same source schema is most often the very Arrow schema (the
	// manifests of a table share it while it stays the same).
	if v.plan != nil && v.planDef == raw && (v.planSchema == as || v.planSchema.Equal(as)) {
		return v.plan, nil
	}
	for _, in := range def.Inputs {
		root := in
		if !as.HasField(in) {
			root, _, _ = strings.Cut(in, ".")
		}
		if !as.HasField(root) {
			return nil, errorf(ErrInvalid, nil, "source column '%s' read by the view no longer exists (dropped or renamed in '%s')", root, def.SourceTable)
		}
	}
	p, err := plan.Compile(*def, as)
	if err != nil {
		return nil, errorf(ErrInvalid, err, "refresh view '%s': %v", v.name, err)
	}
	vs, err := vm.Schema.Arrow()
	if err != nil {
		return nil, errorf(ErrUnsupported, err, "refresh view '%s': view schema: %v", v.name, err)
	}
	if !sameShape(p.Schema(), vs) {
		return nil, errorf(ErrInvalid, nil, "the stored definition of view '%s' does not produce this view's schema; recreate the view", v.name)
	}
	v.plan, v.planDef, v.planSchema = p, raw, as
	return p, nil
}

// sameShape compares names, types and nullability, field by field.
func sameShape(a, b *arrow.Schema) bool {
	if a.NumFields() != b.NumFields() {
		return false
	}
	for i := range a.NumFields() {
		fa, fb := a.Field(i), b.Field(i)
		if fa.Name != fb.Name || fa.Nullable != fb.Nullable || !arrow.TypeEqual(fa.Type, fb.Type) {
			return false
		}
	}
	return true
}

// intact reports whether the view is as its last refresh left it: its
// stamp is the latest version, or every later commit (LanceDB compacting
// the view, building an index on it) kept its rows as they were.
func (v *View) intact(ctx context.Context, wm Watermark, vm *lance.Snapshot) bool {
	if wm.ViewVersion == vm.Version {
		return true
	}
	if wm.ViewVersion > vm.Version {
		return false
	}
	old, err := v.table.Checkout(ctx, wm.ViewVersion)
	if err != nil {
		return false
	}
	// A hand-edited definition is drift too: the rows were computed by
	// the old one.
	if old.Schema.Metadata[KeyDefinition] != vm.Schema.Metadata[KeyDefinition] {
		return false
	}
	cs, err := lance.Changes(ctx, old, vm)
	return err == nil && cs.IsEmpty()
}

// rebuild recomputes the view at the target version and replaces every
// fragment of the view in one commit with the watermark.
func (a *attempt) rebuild(ctx context.Context) (*Result, error) {
	v, sm, vm, p := a.v, a.sm, a.vm, a.p
	ro, pageBytes, err := a.rebuildBounds() // before any work: it may not fit
	if err != nil {
		return nil, err
	}
	// The rebuild makes a new index from the rows it writes; letting the old
	// one go now keeps the two from being live together (80 MB each at 5M
	// view rows). Should the rebuild fail, the next incremental refresh
	// loads the saved index or builds one from the view.
	v.index = nil
	w, err := v.newRebuildWriter(vm)
	if err != nil {
		return nil, err
	}
	defer w.abort()
	w.fw.PageBytes(pageBytes)
	w.fw.Limit(budget.From(ctx))
	rows, err := rebuild.RunWith(ctx, sm, p, memory.DefaultAllocator, ro, w.write)
	if err != nil {
		return nil, errorf(ErrInvalid, err, "rebuild view '%s' from '%s' version %d: %v", v.name, p.Definition().SourceTable, sm.Version, err)
	}
	all, err := vm.RowIDs(ctx)
	if err != nil {
		return nil, errorf(ErrStorage, err, "rebuild view '%s': list its rows: %v", v.name, err)
	}
	m, err := a.commit(ctx, w, all, nil, nil)
	if err != nil {
		return nil, err
	}
	if x, err := w.prov.Index(m.Version); err == nil && !w.provLost {
		v.index = x
		a.saveIndex()
	} else {
		v.index = nil
	}
	return &Result{Mode: ModeRebuild, RowsWritten: rows, SourceVersion: sm.Version, Version: m.Version}, nil
}

// incremental applies change set cs to the view in one commit. The head
// read ahead is checked once the rows are known, before anything changes.
func (a *attempt) incremental(ctx context.Context, cs *lance.ChangeSet) (*Result, error) {
	v, sm, vm, p := a.v, a.sm, a.vm, a.p
	cold := v.index == nil
	x, err := v.ensureIndex(ctx, vm)
	if err != nil {
		return nil, err
	}
	w, err := v.newWriter(vm)
	if err != nil {
		return nil, err
	}
	defer w.abort()
	w.fw.Limit(budget.From(ctx))
	w.fw.PageBytes(budgetPageBytes(a.o.Budget))
	out, err := incremental.Step(ctx, incremental.Input{
		At: sm, Changes: cs, Plan: p, ViewAt: vm, Index: x,
	}, w.write)
	if err := a.checkHead(ctx); err != nil {
		return nil, err
	}
	if err != nil {
		return nil, errorf(ErrInvalid, err, "refresh view '%s' from '%s' version %d to %d: %v", v.name, p.Definition().SourceTable, cs.From, cs.To, err)
	}
	if out.Rebuild != "" {
		// The step could not be taken row by row (a capped view whose
		// kept rows are no longer the first ones in scan order): the
		// result's mode says rebuild, and its Reason why.
		w.abort() // nothing was written
		return a.rebuildFor(ctx, out.Rebuild)
	}
	// A big change's index update (growing 8-byte-per-row slices) runs
	// beside the commit, which mostly waits on fsyncs; a failed commit
	// drops the index. Only reads of out are shared.
	next := vm.Version + 1 // what a commit that refuses to rebase makes
	var applied <-chan struct{}
	if len(out.Added)+int(out.EvictedSources.GetCardinality()) >= 1024 {
		applied = budget.Go(budget.From(ctx), func() { // inline when no token is free
			x.Apply(out.EvictedSources, out.Added, vm.NextRowID, next)
		})
	} else {
		x.Apply(out.EvictedSources, out.Added, vm.NextRowID, next)
		done := make(chan struct{})
		close(done)
		applied = done
	}
	stampOnly := len(out.Added) == 0 && (out.Evict == nil || out.Evict.IsEmpty())
	if stampOnly && a.spec != nil {
		<-applied
		return a.publishStampOnly(ctx, next, cold)
	}
	// A speculation is dropped after the commit (reconcile's defer), not
	// before: waiting for its sync would delay the commit.
	var upcoming *lance.NextMetadata
	if v.scoreAfter(stampOnly) >= stampScoreStart {
		upcoming = a.stamp.nextStamp() // the next refresh speculates
	}
	m, err := a.commit(ctx, w, out.Evict, out.Added, upcoming)
	<-applied
	if err := a.committed(m, err, next, stampOnly, cold); err != nil {
		return nil, err
	}
	return &Result{Mode: ModeIncremental, RowsWritten: uint64(len(out.Added)), SourceVersion: sm.Version, Version: m.Version}, nil
}

// commit publishes the written fragments, the evictions and the watermark
// as view version vm+1, refusing any concurrent commit.
// written are the provenance ids of the rows written (a rebuild's writer
// has them itself), for the inserted-rows key filter that makes any two refresh
// commits — mvd's or LanceDB's — conflict rather than rebase.
// next, if not nil, is the watermark commit expected next (Commit.Next).
func (a *attempt) commit(ctx context.Context, w *viewWriter, evict *roaring64.Bitmap, written []uint64, next *lance.NextMetadata) (*lance.Snapshot, error) {
	v, vm := a.v, a.vm
	// The key filter hashes every id written: for a big write that runs
	// beside the writer's last pages rather than after them.
	keys := w.keys // a rebuild's
	if keys == nil {
		keys = bitmapOf(written)
	}
	kf := lance.RefreshKeyFilter(plan.SourceRowID, keys)
	var prepared <-chan struct{}
	if kf.Keys.GetCardinality() >= 1024 {
		prepared = budget.Go(budget.From(ctx), kf.Prepare) // inline when no token is free
	} else {
		done := make(chan struct{})
		close(done)
		prepared = done
	}
	frags, err := w.finish()
	<-prepared
	if err != nil {
		return nil, errorf(ErrStorage, err, "refresh view '%s': write rows: %v", v.name, err)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	c := &lance.Commit{
		DeleteRowIDs:   evict,
		Fragments:      frags,
		SchemaMetadata: a.stamp.stamp(),
		Rebase:         lance.RebaseNever,
		Pending:        w.batch,
		Prepared:       a.prepared,
		// The hint is written in the background (DB.Close waits for it),
		// and so is the name's sync if the commit moves only the
		// watermark (lance ignores DeferSync on one with rows).
		DeferHint: true,
		DeferSync: !v.db.strict,
		Next:      next,
	}
	if len(frags) > 0 || (evict != nil && !evict.IsEmpty()) {
		// A stamp alone is an UpdateConfig, which carries no filter.
		c.InsertedRows = kf
	}
	m, err := v.table.Commit(ctx, vm, c)
	if err != nil {
		if !errors.Is(err, lance.ErrConflict) {
			// The version may be published (ErrCommitUncertain, or a
			// failure after the link): its data files must stay.
			w.committed = true
		}
		return nil, v.commitError(err, vm)
	}
	w.committed = true
	return m, nil
}

// commitError is the error of a failed commit of version vm+1; the warm
// index is dropped, as it may describe neither version now.
func (v *View) commitError(err error, vm *lance.Snapshot) error {
	v.index = nil
	if errors.Is(err, lance.ErrCommitUncertain) {
		return errorf(ErrStorage, err, "refresh view '%s': version %d was committed but may not be durable: %v", v.name, vm.Version+1, err)
	}
	var ce *lance.ConflictError
	if errors.As(err, &ce) {
		return &ConflictError{View: v.name, ReadVersion: vm.Version, Version: ce.Version, Operation: string(ce.Operation), Err: err}
	}
	return errorf(ErrStorage, err, "refresh view '%s': commit version %d: %v", v.name, vm.Version+1, err)
}

// committed completes an incremental refresh after its commit of version
// want (m, or the commit's error err): the warm index, which describes
// want, is dropped unless that version was made; the prediction notes
// whether the commit moved the watermark alone; an index built cold is
// saved.
func (r *refreshRun) committed(m *lance.Snapshot, err error, want uint64, stampOnly, cold bool) error {
	v := r.v
	if err != nil {
		v.index = nil // it describes a version that was not made
		return err
	}
	if m.Version != want {
		v.index = nil
		return errorf(ErrInvalid, nil, "refresh view '%s': committed version %d, want %d", v.name, m.Version, want)
	}
	v.noteStampOnly(stampOnly)
	if cold {
		r.saveIndex()
	}
	return nil
}

// bitmapOf returns the set of ids. Runs of consecutive ids (an append's
// rows) are added as ranges, not one by one.
func bitmapOf(ids []uint64) *roaring64.Bitmap {
	bm := roaring64.New()
	for i := 0; i < len(ids); {
		j := i + 1
		for j < len(ids) && ids[j] == ids[j-1]+1 {
			j++
		}
		if j-i >= 16 {
			bm.AddRange(ids[i], ids[j-1]+1)
		} else {
			bm.AddMany(ids[i:j])
		}
		i = j
	}
	return bm
}

// sourceIDs returns the __source_row_id values of a view batch (its last
// column), nil if that is not a uint64 column.
func sourceIDs(rec arrow.RecordBatch) []uint64 {
	col := rec.Column(int(rec.NumCols()) - 1)
	type u64s interface{ Uint64Values() []uint64 }
	if a, ok := col.(u64s); ok {
		return a.Uint64Values()
	}
	return nil
}

// ensureIndex returns a provenance index reflecting vm: the warm one, the
// saved one caught up, or one built from the view.
func (v *View) ensureIndex(ctx context.Context, vm *lance.Snapshot) (*provenance.Index, error) {
	if v.index == nil {
		if x, err := provenance.Load(v.db.fs, v.table.Root(), v.incarnation); err == nil && x.Version <= vm.Version {
			v.index, v.savedVersion = x, x.Version
		}
	}
	if v.index != nil && v.index.Version != vm.Version {
		if err := provenance.CatchUp(ctx, v.index, vm); err != nil {
			v.index = nil
		}
	}
	if v.index == nil {
		x, err := provenance.Build(ctx, vm)
		if err != nil {
			return nil, errorf(ErrInvalid, err, "refresh view '%s': %v", v.name, err)
		}
		v.index = x
	}
	return v.index, nil
}

// saveIndex saves the view's warm index. A failure is the refresh's
// warning, not its error: its commit landed, and the index is a cache
// (the next refresh loads the older file and catches it up, or builds it).
func (r *refreshRun) saveIndex() {
	if err := r.v.saveIndexLocked(); err != nil {
		r.v.unsaved = r.v.index.Version
		r.warnings = append(r.warnings, indexWarning(r.v.name, err))
	}
}

// indexWarning is the warning of a provenance index that was not saved.
func indexWarning(view string, err error) string {
	return fmt.Sprintf("the provenance index of view '%s' was not saved (%v); it is a cache, rebuilt by the next refresh", view, err)
}

// saveIndexLocked is saveIndex with v.mu held.
func (v *View) saveIndexLocked() error {
	if v.index == nil || v.index.Version == v.savedVersion {
		return nil
	}
	start := time.Now()
	if err := v.index.Save(v.db.fs, v.table.Root(), v.incarnation); err != nil {
		return err
	}
	v.savedVersion, v.savedAt, v.saveTook = v.index.Version, v.db.now(), time.Since(start)
	return nil
}
