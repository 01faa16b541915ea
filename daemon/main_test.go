package daemon

import (
	"os"
	"testing"
)

// TestMain doubles as an `mvd serve` process for the process tests
// (serveHelper).
func TestMain(m *testing.M) {
	if os.Getenv("MVD_TEST_SERVE") != "" {
		serveHelper()
	}
	os.Exit(m.Run())
}
