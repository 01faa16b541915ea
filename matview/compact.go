package matview

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"slices"
	"strconv"
	"time"

	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/lance/datawriter"
)

// Bounds of one compaction step (CompactOptions' defaults).
const (
	// DefaultCompactSmallRows: a fragment of fewer rows is small. A
	// compacted tail grows until it is this big, then is left alone, so
	// no row is rewritten more than a few times.
	DefaultCompactSmallRows = 64 << 10
	// DefaultCompactStepRows bounds the live rows one step rewrites
	// (a single fragment bigger than that still goes alone).
	DefaultCompactStepRows = 256 << 10
)

// CompactOptions say what one compaction step of a view does.
type CompactOptions struct {
	// Policy says when the step is due, where the view's own metadata
	// (mv.compact_* keys) does not; Force compacts whatever is eligible
	// regardless (mvd view optimize).
	Policy CompactPolicy
	Force  bool
	// SmallRows: fragments of fewer rows are small (default
	// DefaultCompactSmallRows). TargetRows caps a new fragment (default
	// lance.MaxRowsPerFragment, as LanceDB's optimize).
	SmallRows, TargetRows uint64
	// StepRows bounds the live rows rewritten by the step (default
	// DefaultCompactStepRows), so that a huge view is compacted over
	// several steps; CompactResult.More says work remains.
	StepRows uint64
}

func (o *CompactOptions) fill() {
	if o.SmallRows == 0 {
		o.SmallRows = DefaultCompactSmallRows
	}
	if o.TargetRows == 0 {
		o.TargetRows = lance.MaxRowsPerFragment
	}
	if o.StepRows == 0 {
		o.StepRows = DefaultCompactStepRows
	}
}

// CompactResult is what one compaction step did.
type CompactResult struct {
	// Version is the view version the step committed (0: none).
	Version uint64
	// FragmentsRemoved and FragmentsAdded count the fragments replaced
	// and their replacements; Rows the live rows rewritten.
	FragmentsRemoved, FragmentsAdded int
	Rows                             uint64
	// BytesRead are the data file bytes of the fragments replaced,
	// BytesWritten those of their replacements (the old files go when
	// version cleanup removes the versions that reference them).
	BytesRead, BytesWritten uint64
	// More says the step stopped at its bound with eligible fragments
	// left: the next step continues.
	More bool
	// Took is the step's duration, CommitTook that of its commit alone
	// (the part a refresh through the same View may wait for).
	Took, CommitTook time.Duration
}

// compactAttempts bounds the commits of one step when other writers'
// commits win the race for the next version.
const compactAttempts = 8

// Compact does one bounded compaction step of the view, if its policy
// says one is due (or o.Force): consecutive small fragments, and
// fragments with too many deleted rows, are rewritten into fragments of
// up to o.TargetRows rows, in one Rewrite commit that keeps every row's
// stable row id and row versions. So the provenance index, change sets
// (of views over this one) and indices stay valid, and the commit moves
// mv.view_version with it when the view was intact: LanceDB's refresh of
// the view stays no_op or incremental, never a drift rebuild.
//
// The rows are read and written without holding the view's refresh lock;
// only the commit takes it, so a refresh through this View waits for a
// commit, never for the rewrite. A commit by another writer meanwhile
// (LanceDB, another process) makes the step commit again on the newer
// version if the fragments it rewrote are unchanged, and give up
// otherwise (ErrConflict; its files are removed): it never loses their
// rows. A crash leaves the view at its old or new version, whole; files
// written and not committed are never referenced.
func (v *View) Compact(ctx context.Context, o CompactOptions) (*CompactResult, error) {
	start := time.Now()
	o.fill()
	vm, _, err := v.current(ctx)
	if err != nil {
		return nil, err
	}
	if o.Policy, err = CompactPolicyFromMetadata(vm.Schema.Metadata, o.Policy); err != nil {
		return nil, errorf(ErrInvalid, err, "compact view '%s': %v", v.name, err)
	}
	groups, more, err := v.planCompaction(ctx, vm, o)
	if err != nil || len(groups) == 0 {
		return &CompactResult{Took: time.Since(start)}, err
	}
	res := &CompactResult{More: more}
	rewrite, err := v.rewriteGroups(ctx, vm, groups, res)
	if err != nil {
		return nil, err
	}
	if v.beforeCompactCommit != nil {
		v.beforeCompactCommit()
	}
	commitStart := time.Now()
	m, maybe, err := v.commitRewrite(ctx, vm, rewrite)
	if err != nil {
		if !maybe {
			// Never published: nothing references the new files. After
			// any other failure the version may be (a failure after the
			// link): they stay, for version cleanup to judge.
			v.removeNew(rewrite)
		}
		return nil, err
	}
	res.Version, res.Took, res.CommitTook = m.Version, time.Since(start), time.Since(commitStart)
	return res, nil
}

// compactGroup is a run of consecutive fragments rewritten together.
type compactGroup struct {
	frags []*lance.Fragment
	rows  uint64 // live
}

// candidate is a fragment that may be rewritten, with its live rows and
// whether it must be (too many deleted rows).
type candidate struct {
	f         *lance.Fragment
	live      uint64
	mustClean bool
}

// tierFactor bounds how much bigger a fragment may be than the smaller
// ones after it for a policy step to rewrite it with them: a view's tail
// is merged in tiers, so a row is rewritten about log4(tail / commit)
// times, not at every step (a forced step, mvd view optimize, merges all).
const tierFactor = 4

// fragmentStats are a fragment's live and deleted rows.
func (v *View) fragmentStats(ctx context.Context, vm *lance.Snapshot, f *lance.Fragment) (live, deleted uint64, err error) {
	if f.Deletion == nil {
		return f.PhysicalRows, 0, nil
	}
	deleted = f.Deletion.NumDeletedRows
	if deleted == 0 {
		fr, err := vm.FragmentRows(ctx, f)
		if err != nil {
			return 0, 0, errorf(ErrStorage, err, "compact view '%s': %v", v.name, err)
		}
		deleted = fr.Deleted.GetCardinality()
	}
	return f.PhysicalRows - min(deleted, f.PhysicalRows), deleted, nil
}

// planCompaction chooses the groups of one step, in the view's fragment
// order, up to o.StepRows live rows; more says eligible fragments were
// left for the next step. Nothing is chosen unless the policy says the
// view is due (or o.Force).
func (v *View) planCompaction(ctx context.Context, vm *lance.Snapshot, o CompactOptions) (groups []compactGroup, more bool, err error) {
	var small int
	var physical, deletedRows uint64
	var run []candidate
	indexed, allIndexed := vm.IndexedFragments()
	for _, f := range vm.Fragments {
		live, deleted, err := v.fragmentStats(ctx, vm, f)
		if err != nil {
			return nil, false, err
		}
		physical += f.PhysicalRows
		deletedRows += deleted
		isSmall := f.PhysicalRows < o.SmallRows
		if isSmall {
			small++
		}
		tooDeleted := o.Policy.DeletedPercent >= 0 && float64(deleted) > float64(f.PhysicalRows)*o.Policy.DeletedPercent/100
		if covered := allIndexed || indexed.Contains(uint32(f.ID)); covered || !isSmall && !tooDeleted {
			groups = append(groups, groupRun(run, o)...)
			run = nil
			continue
		}
		run = append(run, candidate{f: f, live: live, mustClean: tooDeleted})
	}
	groups = append(groups, groupRun(run, o)...)
	due := o.Force ||
		o.Policy.SmallFragments >= 0 && small > o.Policy.SmallFragments ||
		o.Policy.DeletedPercent >= 0 && physical > 0 && float64(deletedRows) > float64(physical)*o.Policy.DeletedPercent/100
	if !due {
		return nil, false, nil
	}
	var rows uint64
	for i, g := range groups {
		if i > 0 && rows+g.rows > o.StepRows {
			return groups[:i], true, nil
		}
		rows += g.rows
	}
	return groups, false, nil
}

// groupRun splits a run of consecutive candidates into the groups worth
// rewriting: tiers taken from the run's end (a fragment joins the smaller
// ones after it while it is at most tierFactor times their rows, unless
// forced), each cut at min(TargetRows, StepRows) rows; one fragment alone
// is rewritten only to drop its deleted rows.
func groupRun(run []candidate, o CompactOptions) []compactGroup {
	var tiers [][]candidate
	for end := len(run); end > 0; {
		start, acc := end-1, run[end-1].live
		for start > 0 {
			c := run[start-1]
			if !o.Force && !c.mustClean && c.live > tierFactor*max(acc, 1) {
				break
			}
			start--
			acc += c.live
		}
		tiers = append(tiers, run[start:end])
		end = start
	}
	slices.Reverse(tiers)
	var out []compactGroup
	limit := min(o.TargetRows, o.StepRows)
	for _, tier := range tiers {
		var cur compactGroup
		flush := func() {
			if len(cur.frags) > 1 || len(cur.frags) == 1 && cur.frags[0].Deletion != nil {
				out = append(out, cur)
			}
			cur = compactGroup{}
		}
		for _, c := range tier {
			if len(cur.frags) > 0 && cur.rows+c.live > limit {
				flush()
			}
			cur.frags = append(cur.frags, c.f)
			cur.rows += c.live
		}
		flush()
	}
	return out
}

// rewriteGroups writes each group's live rows as new fragments, synced,
// and returns the rewrite to commit; on error nothing it wrote remains.
func (v *View) rewriteGroups(ctx context.Context, vm *lance.Snapshot, groups []compactGroup, res *CompactResult) ([]lance.RewriteGroup, error) {
	var out []lance.RewriteGroup
	for _, g := range groups {
		rg := lance.RewriteGroup{}
		for _, f := range g.frags {
			rg.Old = append(rg.Old, f.ID)
			for _, df := range f.Files {
				res.BytesRead += v.fileSize(df)
			}
		}
		frags, err := v.rewriteGroup(ctx, vm, rg.Old)
		rg.New = frags
		out = append(out, rg)
		if err != nil {
			v.removeNew(out)
			return nil, err
		}
		res.FragmentsRemoved += len(rg.Old)
		res.FragmentsAdded += len(rg.New)
		res.Rows += g.rows
		for _, nf := range rg.New {
			for _, df := range nf.Files {
				res.BytesWritten += df.SizeBytes
			}
		}
	}
	return out, nil
}

// fileSize is a data file's size: recorded, or read from the file.
func (v *View) fileSize(df lance.DataFile) uint64 {
	if df.SizeBytes > 0 {
		return df.SizeBytes
	}
	if f, err := v.db.fs.Open(path.Join(v.table.Root(), "data", df.Path)); err == nil {
		defer f.Close()
		return uint64(f.Size())
	}
	return 0
}

// rewriteGroup reads the live rows of fragments ids of vm in order and
// writes them as new, synced fragments (the fragments completed are
// returned with an error, for removal).
func (v *View) rewriteGroup(ctx context.Context, vm *lance.Snapshot, ids []uint64) ([]lance.NewFragment, error) {
	fw := datawriter.NewFragmentWriter(v.db.fs, v.table.Root(), vm.Schema, vm.DataFileVersion)
	sc, err := vm.Scan(ctx, lance.ScanOptions{Fragments: ids})
	if err != nil {
		frags, _ := fw.Finish()
		return frags, errorf(ErrStorage, err, "compact view '%s': %v", v.name, err)
	}
	defer sc.Close()
	for {
		rec, err := sc.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err == nil {
			err = fw.Write(rec)
			rec.Release()
		}
		if err != nil {
			frags, _ := fw.Finish()
			return frags, errorf(ErrStorage, err, "compact view '%s': rewrite fragments: %v", v.name, err)
		}
	}
	frags, err := fw.Finish()
	if err != nil {
		return frags, errorf(ErrStorage, err, "compact view '%s': write fragments: %v", v.name, err)
	}
	return frags, nil
}

// commitRewrite commits the rewrite on the view's latest version, with
// the refresh lock held, moving mv.view_version with it when the view is
// intact; it commits again on a newer version after a lost race, as long
// as the rewritten fragments are unchanged.
// maybe says, on error, that the version may have been published all the
// same (its files must stay).
func (v *View) commitRewrite(ctx context.Context, planned *lance.Snapshot, rewrite []lance.RewriteGroup) (_ *lance.Snapshot, maybe bool, _ error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	for attempt := 0; ; attempt++ {
		head, _, err := v.current(ctx)
		if err != nil {
			return nil, false, err
		}
		if reason := rewriteStale(planned, head, rewrite); reason != "" {
			return nil, false, errorf(ErrConflict, nil, "compact view '%s': version %d changed the fragments it rewrote (%s): nothing committed", v.name, head.Version, reason)
		}
		c := &lance.Commit{Rewrite: rewrite, Rebase: lance.RebaseNever, DeferHint: true}
		if wm := watermarkOf(head.Schema.Metadata); wm.Valid && wm.ViewVersion == head.Version {
			c.SchemaMetadata = map[string]string{KeyViewVersion: strconv.FormatUint(head.Version+1, 10)}
		}
		m, err := v.table.Commit(ctx, head, c)
		if err == nil {
			// The rewrite kept every row and its id: the warm index
			// describes the new version as well.
			if v.index != nil && v.index.Version == head.Version {
				v.index.Version = m.Version
			}
			return m, true, nil
		}
		if errors.Is(err, lance.ErrCommitUncertain) {
			return nil, true, errorf(ErrStorage, err, "compact view '%s': version %d was committed but may not be durable: %v", v.name, head.Version+1, err)
		}
		if !errors.Is(err, lance.ErrConflict) {
			return nil, true, errorf(ErrStorage, err, "compact view '%s': commit version %d: %v", v.name, head.Version+1, err)
		}
		if attempt+1 >= compactAttempts || ctx.Err() != nil {
			return nil, false, errorf(ErrConflict, err, "compact view '%s': %v", v.name, err)
		}
	}
}

// rewriteStale says how the fragments rewrite replaces differ between
// the version it was planned on and head ("" when they do not): gone,
// changed (rows deleted) or no longer consecutive.
func rewriteStale(planned, head *lance.Snapshot, rewrite []lance.RewriteGroup) string {
	pos := make(map[uint64]int, len(head.Fragments))
	for i, f := range head.Fragments {
		pos[f.ID] = i
	}
	was := make(map[uint64]*lance.Fragment, len(planned.Fragments))
	for _, f := range planned.Fragments {
		was[f.ID] = f
	}
	for _, g := range rewrite {
		for i, id := range g.Old {
			p, ok := pos[id]
			if !ok {
				return fmt.Sprintf("fragment %d is gone", id)
			}
			if i > 0 && p != pos[g.Old[i-1]]+1 {
				return fmt.Sprintf("fragment %d moved", id)
			}
			if !sameFragment(was[id], head.Fragments[p]) {
				return fmt.Sprintf("fragment %d changed", id)
			}
		}
	}
	return ""
}

// sameFragment reports whether two versions of a fragment hold the same
// rows: the same files, row count and deletions.
func sameFragment(a, b *lance.Fragment) bool {
	if a == nil || b == nil || a.PhysicalRows != b.PhysicalRows || len(a.Files) != len(b.Files) {
		return false
	}
	for i := range a.Files {
		if a.Files[i].Path != b.Files[i].Path {
			return false
		}
	}
	if (a.Deletion == nil) != (b.Deletion == nil) {
		return false
	}
	return a.Deletion == nil || *a.Deletion == *b.Deletion
}

// removeNew removes the data files of a rewrite that was not committed.
func (v *View) removeNew(rewrite []lance.RewriteGroup) {
	for _, g := range rewrite {
		for _, f := range g.New {
			for _, df := range f.Files {
				_ = v.db.fs.Remove(path.Join(v.table.Root(), "data", df.Path))
			}
		}
	}
}
