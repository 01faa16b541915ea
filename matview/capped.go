package matview

import (
	"context"

	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/plan"
)

// rebuildInstead rebuilds the view where its incremental step could not be
// taken row by row (incremental.Output.Rebuild: a capped view whose kept
// rows are no longer the first ones in scan order); the result's mode says
// rebuild, and its Reason why.
func (v *View) rebuildInstead(ctx context.Context, sm, vm *lance.Snapshot, p *plan.Plan, stamp Watermark, reason string) (*Result, error) {
	v.stampScore = 0
	res, err := v.rebuild(ctx, sm, vm, p, stamp)
	if res != nil {
		res.Reason = reason
	}
	return res, err
}
