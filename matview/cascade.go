package matview

import (
	"context"
	"fmt"
)

// CascadeStep is one view refreshed by RefreshCascade.
type CascadeStep struct {
	View   string
	Result *Result
}

// RefreshCascade refreshes the views upstream of view name first, in
// dependency order (the view at the top of the chain first), then the view
// itself with o. Upstream views are refreshed to their sources' latest
// versions (o.Full applies to them too; o.SourceVersion and o.Changes only
// to the named view). It stops at the first error, returning the steps
// done.
func (db *DB) RefreshCascade(ctx context.Context, name string, o RefreshOptions) ([]CascadeStep, error) {
	chain := []string{name}
	seen := map[string]bool{name: true}
	for cur := name; ; {
		v, err := db.OpenView(ctx, cur)
		if err != nil {
			return nil, err
		}
		d, err := v.Definition()
		if err != nil {
			return nil, err
		}
		up := d.SourceTable
		if seen[up] {
			return nil, errorf(ErrInvalid, nil, "views %v form a cycle", append(chain, up))
		}
		if _, err := db.OpenView(ctx, up); err != nil {
			break // a plain table (or not a view): the top of the chain
		}
		seen[up] = true
		chain = append(chain, up)
		cur = up
	}
	var steps []CascadeStep
	for i := len(chain) - 1; i >= 0; i-- {
		v, err := db.OpenView(ctx, chain[i])
		if err != nil {
			return steps, err
		}
		opt := RefreshOptions{Full: o.Full}
		if i == 0 {
			opt = o
		}
		r, err := v.Refresh(ctx, opt)
		if err != nil {
			if i > 0 {
				return steps, fmt.Errorf("refresh upstream view '%s' of '%s': %w", chain[i], name, err)
			}
			return steps, err
		}
		steps = append(steps, CascadeStep{View: chain[i], Result: r})
		if i > 0 {
			// The view below records this version as its watermark: it
			// must not outlive it in a crash (lance.Commit.DeferSync).
			if err := v.Table().WaitDurable(); err != nil {
				return steps, fmt.Errorf("refresh upstream view '%s' of '%s': %w", chain[i], name, err)
			}
		}
	}
	return steps, nil
}
