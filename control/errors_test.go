package control

import (
	"errors"
	"fmt"
	"testing"

	"github.com/mvd-project/mvd/matview"
)

// TestStatementErrorKeepsKindAndExitCode: the position a statement's
// error gains keeps what callers branch on: the sentinel (errors.Is), the
// conflict's exit status 3 and the daemon's absence.
func TestStatementErrorKeepsKindAndExitCode(t *testing.T) {
	conflict := at(26, fmt.Errorf("refresh: %w", &matview.ConflictError{View: "v", ReadVersion: 2, Version: 3}))
	if !errors.Is(conflict, matview.ErrConflict) || ExitCode(conflict) != 3 {
		t.Fatalf("%v: errors.Is conflict %v, exit %d", conflict, errors.Is(conflict, matview.ErrConflict), ExitCode(conflict))
	}
	if want := "refresh: refresh of view 'v' lost to a concurrent commit: view version 3 was committed first (planned on version 2); nothing was written (at position 26)"; conflict.Error() != want {
		t.Fatalf("%q", conflict.Error())
	}
	noDaemon := at(34, ErrNoDaemon)
	if !errors.Is(noDaemon, ErrNoDaemon) || ExitCode(noDaemon) != 1 || ExitCode(nil) != 0 {
		t.Fatalf("%v: exit %d", noDaemon, ExitCode(noDaemon))
	}
	if !errors.Is(ErrJobNotFound, matview.ErrNotFound) || ErrJobNotFound.Error() != "job not found" {
		t.Fatalf("ErrJobNotFound: %v", ErrJobNotFound)
	}
	var se *StatementError
	if !errors.As(invalidAt(7, "bad %s", "x"), &se) || se.Pos != 7 || !errors.Is(se, matview.ErrInvalid) {
		t.Fatalf("invalidAt: %+v", se)
	}
}
