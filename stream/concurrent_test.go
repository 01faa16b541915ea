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
// exceeded"); each must succeed.
func TestEnsureConcurrently(t *testing.T) {
	ctx := testCtx(t)
	cl := natstest.Start(t, 3)
	var wg sync.WaitGroup
	errs := make([]error, 3)
	for i := range errs {
		c := connect(t, clusterOptions(cl))
		wg.Go(func() {
			if errs[i] = c.EnsureStreams(ctx); errs[i] == nil {
				_, errs[i] = c.EnsureKeyValue(ctx, jetstream.KeyValueConfig{Bucket: c.Subjects().Bucket("probe"), History: 1})
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
