package daemon

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// TestUnreadableViews: a listed view that cannot be read is logged once
// (again when its error changes), counted in mvd_views_unreadable, left
// out of what is served, and logged again when it is readable.
func TestUnreadableViews(t *testing.T) {
	var logs bytes.Buffer
	m := newMetrics()
	u := newUnreadableViews(slog.New(slog.NewTextHandler(&logs, nil)), m.Registry)
	bad := errors.New("view 'b' cannot be read: corrupt manifest")
	specs := []ViewSpec{{Name: "a", Source: "src"}, {Name: "b", Err: bad}}
	for range 3 {
		if got := u.note(specs); len(got) != 1 || got[0].Name != "a" {
			t.Fatalf("served %+v, want a only", got)
		}
	}
	if n := strings.Count(logs.String(), "view cannot be read"); n != 1 || !strings.Contains(logs.String(), "view=b") || !strings.Contains(logs.String(), "corrupt manifest") {
		t.Fatalf("logged %d times:\n%s", n, logs.String())
	}
	if g := testutil.ToFloat64(u.gauge); g != 1 {
		t.Fatalf("mvd_views_unreadable = %v, want 1", g)
	}
	if n, err := testutil.GatherAndCount(m.Registry, "mvd_views_unreadable"); err != nil || n != 1 {
		t.Fatalf("not registered: %d, %v", n, err)
	}
	u.note([]ViewSpec{{Name: "a", Source: "src"}, {Name: "b", Err: errors.New("another error")}})
	if n := strings.Count(logs.String(), "view cannot be read"); n != 2 {
		t.Fatalf("a changed error is not logged again:\n%s", logs.String())
	}
	u.note([]ViewSpec{{Name: "a", Source: "src"}, {Name: "b", Source: "src"}})
	if !strings.Contains(logs.String(), "view readable again") || testutil.ToFloat64(u.gauge) != 0 {
		t.Fatalf("recovery: gauge %v, logs:\n%s", testutil.ToFloat64(u.gauge), logs.String())
	}
}
