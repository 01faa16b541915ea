package stream

import (
	"sync"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/mvd-project/mvd/internal/natstest"
)

// TestEnsureConcurrently: three daemons started together on a fresh
// 3-node cluster create the same R3 streams and bucket at once. The
// cluster created them but answered none of the three requests, and every
// daemon failed to start ("create or update stream … context deadline
// exceeded"); each must succeed, and so must their creates of one view's
// R3 consumer right after (a CI run saw such a create left unanswered).
func TestEnsureConcurrently(t *testing.T) {
	cl := natstest.Start(t, 3)
	ctx := clusterCtx(t)
	var wg sync.WaitGroup
	errs := make([]error, 3)
	for i := range errs {
		c := connect(t, clusterOptions(cl))
		wg.Go(func() {
			if errs[i] = c.EnsureStreams(ctx); errs[i] == nil {
				_, errs[i] = c.EnsureKeyValue(ctx, jetstream.KeyValueConfig{Bucket: c.Subjects().Bucket("probe"), History: 1})
			}
			if errs[i] == nil {
				_, errs[i] = c.ViewConsumer(ctx, "v", "events", ConsumerConfig{})
			}
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("daemon %d: %v", i, err)
		}
	}
}
