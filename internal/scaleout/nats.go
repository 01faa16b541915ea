package scaleout

import (
	"context"
	"strings"
	"testing"

	"github.com/mvd-project/mvd/internal/natstest"
)

// natsCluster is a natstest cluster as the run's NATS.
type natsCluster struct {
	tb testing.TB
	c  *natstest.Cluster
}

// StartNATS starts a NATS JetStream cluster of n nodes (real nats-server
// processes on 127.0.0.1; n == 1 is a single server).
func StartNATS(tb testing.TB, n int) NATS {
	tb.Helper()
	return natsCluster{tb: tb, c: natstest.Start(tb, n)}
}

func (n natsCluster) URLs() []string { return strings.Split(n.c.URLs(), ",") }

func (n natsCluster) KillMetaLeader(context.Context) (int, error) {
	if n.c.Size() < 3 {
		return -1, ErrNotCluster
	}
	i := n.c.MetaLeader(n.tb)
	n.c.Kill(i)
	return i, nil
}

func (n natsCluster) Restart(_ context.Context, i int) error {
	n.c.Restart(i)
	return nil
}
