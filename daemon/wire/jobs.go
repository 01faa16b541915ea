package wire

import (
	"context"

	"github.com/mvd-project/mvd/checkpoint"
	"github.com/mvd-project/mvd/daemon"
)

// Jobs keeps the daemon's refresh jobs in a checkpoint.Store.
type Jobs struct{ Store *checkpoint.Store }

var _ daemon.JobStore = Jobs{}

// PutJob records a job (and deletes the records of drop) in one synced
// write.
func (j Jobs) PutJob(ctx context.Context, r daemon.JobRecord, drop ...uint64) error {
	return j.Store.PutJob(ctx, checkpoint.JobEntry{Seq: r.Seq, Done: r.Done, Value: r.Value}, drop...)
}

// Jobs returns every job kept, oldest first.
func (j Jobs) Jobs(ctx context.Context) ([]daemon.JobRecord, error) {
	es, err := j.Store.Jobs(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]daemon.JobRecord, len(es))
	for i, e := range es {
		out[i] = daemon.JobRecord{Seq: e.Seq, Done: e.Done, Value: e.Value}
	}
	return out, nil
}
