package sqlexpr

import (
	"strings"
	"testing"
	"time"
)

// TestLocalInstant checks the reading of local times, DST gaps and folds
// included, in zones with whole- and half-hour offsets.
func TestLocalInstant(t *testing.T) {
	cases := []struct {
		zone, wall string
		want       string // UTC instant, or "gap" / "fold"
	}{
		{"America/New_York", "2025-03-09 01:59:59", "2025-03-09T06:59:59Z"},
		{"America/New_York", "2025-03-09 02:00:00", "gap"},
		{"America/New_York", "2025-03-09 02:59:59", "gap"},
		{"America/New_York", "2025-03-09 03:00:00", "2025-03-09T07:00:00Z"},
		{"America/New_York", "2025-11-02 00:59:59", "2025-11-02T04:59:59Z"},
		{"America/New_York", "2025-11-02 01:00:00", "fold"},
		{"America/New_York", "2025-11-02 01:59:59", "fold"},
		{"America/New_York", "2025-11-02 02:00:00", "2025-11-02T07:00:00Z"},
		{"America/St_Johns", "2025-03-09 02:30:00", "gap"},
		{"America/St_Johns", "2025-03-09 03:00:00", "2025-03-09T05:30:00Z"},
		{"America/St_Johns", "2025-11-02 01:30:00", "fold"},
		{"Australia/Adelaide", "2025-04-06 02:30:00", "fold"},
		{"Australia/Adelaide", "2025-04-06 03:00:00", "2025-04-05T17:30:00Z"},
		{"Australia/Adelaide", "2025-10-05 02:30:00", "gap"},
		{"Australia/Adelaide", "2025-10-05 03:00:00", "2025-10-04T16:30:00Z"},
		{"Asia/Kolkata", "2025-03-09 00:00:00", "2025-03-08T18:30:00Z"},
		{"+05:30", "2025-03-09 00:00:00", "2025-03-08T18:30:00Z"},
		{"-0330", "2025-03-09 00:00:00", "2025-03-09T03:30:00Z"},
	}
	for _, c := range cases {
		loc, err := loadZone(c.zone)
		if err != nil {
			t.Fatalf("%s: %v", c.zone, err)
		}
		wall, err := parseWall(c.wall)
		if err != nil {
			t.Fatal(err)
		}
		got, err := localInstant(wall, loc)
		switch {
		case c.want == "gap" || c.want == "fold":
			word := map[string]string{"gap": "does not exist", "fold": "is ambiguous"}[c.want]
			if err == nil || !strings.Contains(err.Error(), word) {
				t.Errorf("%s in %s: %v, %v; want a %s", c.wall, c.zone, got, err, c.want)
			}
		case err != nil:
			t.Errorf("%s in %s: %v", c.wall, c.zone, err)
		case got.UTC().Format(time.RFC3339) != c.want:
			t.Errorf("%s in %s = %s, want %s", c.wall, c.zone, got.UTC().Format(time.RFC3339), c.want)
		}
	}
	if _, err := loadZone("Mars/Olympus"); err == nil {
		t.Error("an unknown zone loads")
	}
}
