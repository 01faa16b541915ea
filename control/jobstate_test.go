package control

import (
	"os"
	"regexp"
	"testing"
)

// TestJobStatesAsDocumented: the job states docs/control.md lists are the
// ones Final knows, queued and running the only ones not final; a no-op
// refresh is a succeeded job (its result's mode says no_op), so "no_op"
// is no state of a job.
func TestJobStatesAsDocumented(t *testing.T) {
	doc, err := os.ReadFile("../docs/control.md")
	if err != nil {
		t.Fatal(err)
	}
	sec := regexp.MustCompile(`(?s)### States\n(.*?)\n\n`).FindSubmatch(doc)
	if sec == nil {
		t.Fatal("docs/control.md has no ### States table")
	}
	rows := regexp.MustCompile("(?m)^\\| `([a-z_]+)` \\|").FindAllSubmatch(sec[1], -1)
	if len(rows) != 7 {
		t.Fatalf("docs/control.md lists %d job states, want 7", len(rows))
	}
	for _, r := range rows {
		s := JobState(r[1])
		if want := s != JobQueued && s != JobRunning; s.Final() != want {
			t.Errorf("documented state %s: Final() = %v", s, s.Final())
		}
	}
	if JobState("no_op").Final() {
		t.Error(`"no_op" is a final job state; docs/control.md says a no-op refresh ends succeeded`)
	}
}
