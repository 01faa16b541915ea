package wire

import (
	"testing"

	"github.com/mvd-project/mvd/internal/natstest"
)

// natsServer starts a nats-server process (built from the module in go.mod)
// with JetStream on a loopback port, token auth and its own store; it is
// killed with the test. It returns the URL with the token, as --nats-url
// takes it.
func natsServer(t *testing.T) string {
	t.Helper()
	return natstest.Single(t)
}
