package matview

import (
	"fmt"
	"math"
	"strconv"
	"time"
)

// Retention is how many of a view's old versions are kept: the versions
// committed within KeepFor, and at least the newest Keep. It is stored in
// the view's metadata beside the auto-refresh policy (KeyKeepVersionsForMS,
// KeyKeepVersions), so any daemon serving the view applies it.
type Retention struct {
	// KeepFor keeps the versions committed in this last stretch of time.
	KeepFor time.Duration
	// Keep keeps at least this many newest versions (1 or more).
	Keep int
}

// DefaultRetention is the retention of a view whose metadata names none:
// an hour of versions, and at least the last 10 (time travel and readers
// that checked out a recent version keep working).
var DefaultRetention = Retention{KeepFor: time.Hour, Keep: 10}

// The view metadata keys a Retention is stored under.
const (
	// KeyKeepVersionsForMS is Retention.KeepFor in milliseconds (decimal).
	KeyKeepVersionsForMS = "mv.keep_versions_for_ms"
	// KeyKeepVersions is Retention.Keep (decimal).
	KeyKeepVersions = "mv.keep_versions"
)

// maxKeepFor bounds KeepFor so that Now-KeepFor cannot overflow.
const maxKeepFor = 100 * 365 * 24 * time.Hour

// Validate refuses a negative or absurd KeepFor and a Keep below 1.
func (r Retention) Validate() error {
	if r.KeepFor < 0 || r.KeepFor > maxKeepFor {
		return fmt.Errorf("keep-versions-for must be between 0 and 100 years, not %v", r.KeepFor)
	}
	if r.Keep < 1 {
		return fmt.Errorf("keep-versions must be at least 1 (the latest version is always kept), not %d", r.Keep)
	}
	return nil
}

// RetentionFromMetadata reads a view's retention from its metadata; a key
// that is absent (or empty) takes DefaultRetention's value.
func RetentionFromMetadata(md map[string]string) (Retention, error) {
	r := DefaultRetention
	if s := md[KeyKeepVersionsForMS]; s != "" {
		ms, err := strconv.ParseFloat(s, 64)
		if err != nil || ms < 0 || math.IsNaN(ms) || ms*float64(time.Millisecond) > float64(maxKeepFor) {
			return Retention{}, fmt.Errorf("%s: %q is not a duration in milliseconds between 0 and 100 years", KeyKeepVersionsForMS, s)
		}
		r.KeepFor = time.Duration(ms * float64(time.Millisecond))
	}
	if s := md[KeyKeepVersions]; s != "" {
		k, err := strconv.Atoi(s)
		if err != nil || k < 1 {
			return Retention{}, fmt.Errorf("%s: %q is not a whole number of versions of at least 1", KeyKeepVersions, s)
		}
		r.Keep = k
	}
	return r, r.Validate()
}

// Metadata returns the keys that store r.
func (r Retention) Metadata() map[string]string {
	return map[string]string{
		KeyKeepVersionsForMS: strconv.FormatFloat(float64(r.KeepFor)/float64(time.Millisecond), 'f', -1, 64),
		KeyKeepVersions:      strconv.Itoa(r.Keep),
	}
}
