package matview

import (
	"strings"
	"testing"
	"time"
)

func TestPolicyMetadata(t *testing.T) {
	tests := []struct {
		md      map[string]string
		want    Policy
		wantErr string
	}{
		{md: nil, want: Policy{Mode: OnCommit}},
		{md: map[string]string{KeyAutoRefresh: "manual"}, want: Policy{Mode: Manual}},
		{md: map[string]string{KeyAutoRefresh: "interval", KeyIntervalSeconds: "2.5"}, want: Policy{Mode: Interval, Interval: 2500 * time.Millisecond}},
		{md: map[string]string{KeyAutoRefresh: "on-commit", KeyDebounceMS: "20", KeyFreshnessTargetMS: "1000"}, want: Policy{Mode: OnCommit, Debounce: 20 * time.Millisecond, FreshnessTarget: time.Second}},
		{md: map[string]string{KeyAutoRefresh: "interval"}, wantErr: "needs an interval"},
		{md: map[string]string{KeyAutoRefresh: "hourly"}, wantErr: "unknown auto-refresh policy"},
		{md: map[string]string{KeyDebounceMS: "-1"}, wantErr: "not a non-negative number"},
		{md: map[string]string{KeyFreshnessTargetMS: "NaN"}, wantErr: "not a non-negative number"},
		{md: map[string]string{KeyAutoRefresh: "interval", KeyIntervalSeconds: "1e12"}, wantErr: "too large"},
	}
	for _, tc := range tests {
		got, err := PolicyFromMetadata(tc.md)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%v: error %v, want %q", tc.md, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%v: %+v, %v; want %+v", tc.md, got, err, tc.want)
			continue
		}
		back, err := PolicyFromMetadata(got.Metadata())
		if err != nil || back != got {
			t.Errorf("round trip of %+v: %+v, %v", got, back, err)
		}
	}
}

// FuzzPolicyMetadata: any metadata either fails to parse or gives a
// valid policy whose metadata parses back to the same policy.
func FuzzPolicyMetadata(f *testing.F) {
	f.Add("interval", "2.5", "20", "1000")
	f.Add("manual", "", "", "")
	f.Add("on-commit", "0", "-1", "1e309")
	f.Add("interval", "1e12", "0.000001", "3")
	f.Fuzz(func(t *testing.T, mode, interval, debounce, target string) {
		md := map[string]string{KeyAutoRefresh: mode, KeyIntervalSeconds: interval, KeyDebounceMS: debounce, KeyFreshnessTargetMS: target}
		p, err := PolicyFromMetadata(md)
		if err != nil {
			return
		}
		if err := p.Validate(); err != nil {
			t.Fatalf("parsed an invalid policy %+v: %v", p, err)
		}
		back, err := PolicyFromMetadata(p.Metadata())
		if err != nil || back != p {
			t.Fatalf("round trip of %+v: %+v, %v", p, back, err)
		}
	})
}
