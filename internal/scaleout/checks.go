package scaleout

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/mvd-project/mvd/internal/lancedbtest"
)

// WaitPast waits until every view's watermark reaches want[its source] and
// returns, per view, how long after since it was first seen there. Views
// still short of it after limit are named in the error (the durations of
// the others are returned too).
func (c *Cluster) WaitPast(ctx context.Context, views []View, want map[string]uint64, since time.Time, limit time.Duration) (map[string]time.Duration, error) {
	got := map[string]time.Duration{}
	last := map[string]uint64{}
	deadline := since.Add(limit)
	err := poll(ctx, deadline, func() (bool, error) {
		var lastErr error
		for _, v := range views {
			if _, ok := got[v.Name]; ok {
				continue
			}
			wm, err := c.Watermark(ctx, v.Name)
			if err != nil {
				lastErr = err
				continue
			}
			last[v.Name] = wm
			if wm >= want[v.Source] {
				got[v.Name] = time.Since(since)
			}
		}
		return len(got) == len(views), lastErr
	})
	if err != nil {
		var short []string
		for _, v := range views {
			if _, ok := got[v.Name]; !ok {
				short = append(short, fmt.Sprintf("%s at source version %d, want %d", v.Name, last[v.Name], want[v.Source]))
			}
		}
		return got, fmt.Errorf("views not refreshed past source versions %v within %v: %s: %w", want, limit, strings.Join(short, "; "), err)
	}
	return got, nil
}

// WaitNotified waits until the subscriber has a successful notification
// of every view at want[its source] or later, and returns, per view, how
// long after since it arrived.
func (c *Cluster) WaitNotified(ctx context.Context, sub *Subscriber, views []View, want map[string]uint64, since time.Time, limit time.Duration) (map[string]time.Duration, error) {
	got := map[string]time.Duration{}
	err := poll(ctx, since.Add(limit), func() (bool, error) {
		for _, v := range views {
			if at, ok := sub.Notified(v.Name, want[v.Source]); ok {
				got[v.Name] = at.Sub(since)
			}
		}
		return len(got) == len(views), sub.Err()
	})
	if err != nil {
		var short []string
		for _, v := range views {
			if _, ok := got[v.Name]; !ok {
				short = append(short, v.Name)
			}
		}
		return got, fmt.Errorf("no notification past source versions %v within %v of %s: %w", want, limit, strings.Join(short, ", "), err)
	}
	return got, nil
}

// Converge waits, once the writer has stopped, until every view is at its
// source's newest version, then checks with LanceDB that each holds
// exactly its definition evaluated there: every row once, no
// __source_row_id duplicated or missing.
func (c *Cluster) Converge(ctx context.Context, limit time.Duration) error {
	latest := map[string]uint64{}
	for _, s := range c.Sources {
		v, err := c.Checker.Version(s)
		if err != nil {
			return err
		}
		latest[s] = v
	}
	if _, err := c.WaitPast(ctx, c.Views, latest, time.Now(), limit); err != nil {
		return fmt.Errorf("converge: %w", err)
	}
	var errs []error
	for _, v := range c.Views {
		wm, err := c.Watermark(ctx, v.Name)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if wm != latest[v.Source] {
			errs = append(errs, fmt.Errorf("view %s at source version %d past the source's newest, %d", v.Name, wm, latest[v.Source]))
			continue
		}
		if err := c.Checker.CheckView(v.Name, wm); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// VersionStep is one version of a view in its history.
type VersionStep struct {
	Version, SourceVersion uint64
	Rows                   int
	// Changed: its rows differ from the previous version's.
	Changed bool
}

// CheckHistory reads every version of view with LanceDB and checks that no
// source step was committed twice: the watermark (mv.source_version) never
// goes back, a version that changes rows has a strictly higher one than
// the version before it, and no version holds a __source_row_id twice.
func (c *Cluster) CheckHistory(view string) ([]VersionStep, error) {
	versions, err := c.Checker.Versions(view)
	if err != nil {
		return nil, fmt.Errorf("versions of %s: %w", view, err)
	}
	var steps []VersionStep
	prevSig := ""
	var prevWM uint64
	for i, ver := range versions {
		s, err := c.Checker.Schema(view, ver)
		if err != nil {
			return steps, fmt.Errorf("schema of %s version %d: %w", view, ver, err)
		}
		var wm uint64
		if raw, ok := s.Metadata["mv.source_version"]; ok {
			if wm, err = strconv.ParseUint(raw, 10, 64); err != nil {
				return steps, fmt.Errorf("%s version %d: bad mv.source_version %q", view, ver, raw)
			}
		}
		scan, err := c.Checker.Read(view, lancedbtest.ReadOptions{Version: ver})
		if err != nil {
			return steps, fmt.Errorf("read %s version %d: %w", view, ver, err)
		}
		sig, err := signature(scan.Rows)
		if err != nil {
			return steps, fmt.Errorf("%s version %d: %w", view, ver, err)
		}
		step := VersionStep{Version: ver, SourceVersion: wm, Rows: len(scan.Rows), Changed: i > 0 && sig != prevSig}
		steps = append(steps, step)
		if i > 0 {
			if wm < prevWM {
				return steps, fmt.Errorf("%s version %d: watermark went back from source version %d to %d", view, ver, prevWM, wm)
			}
			if step.Changed && wm <= prevWM {
				return steps, fmt.Errorf("%s version %d changes rows at source version %d, the version before was already there (a source step committed twice)", view, ver, wm)
			}
		}
		prevSig, prevWM = sig, wm
	}
	return steps, nil
}

// signature is the rows as one canonical string (the multiset of their
// column values), after checking that no __source_row_id repeats.
func signature(rows []lancedbtest.Row) (string, error) {
	keys := make([]string, 0, len(rows))
	seen := map[string]bool{}
	for _, r := range rows {
		id := r.Text("__source_row_id")
		if seen[id] {
			return "", fmt.Errorf("__source_row_id %s appears twice", id)
		}
		seen[id] = true
		cols := make([]string, 0, len(r))
		for k := range r {
			if !strings.HasPrefix(k, "_row") {
				cols = append(cols, k)
			}
		}
		sort.Strings(cols)
		keys = append(keys, r.Key(cols...))
	}
	slices.Sort(keys)
	return strings.Join(keys, "\n"), nil
}
