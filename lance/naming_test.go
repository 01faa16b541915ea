package lance

import (
	"math"
	"testing"
)

func TestParseManifestName(t *testing.T) {
	tests := []struct {
		name    string
		version uint64
		naming  ManifestNaming
		ok      bool
	}{
		{"1.manifest", 1, NamingV1, true},
		{"42.manifest", 42, NamingV1, true},
		{"18446744073709551614.manifest", 1, NamingV2, true},
		{"18446744073709551605.manifest", 10, NamingV2, true},
		{"00000000000000000000.manifest", math.MaxUint64, NamingV2, true},
		{"18446744073709551615.manifest", 0, NamingUnknown, false}, // version 0
		{"0.manifest", 0, NamingUnknown, false},
		{"01.manifest", 0, NamingUnknown, false},
		{"d5.manifest", 0, NamingUnknown, false},
		{"18446744073709551614.manifest#1", 0, NamingUnknown, false},
		{".tmp_1.manifest_abc", 0, NamingUnknown, false},
		{"latest_version_hint.json", 0, NamingUnknown, false},
		{".manifest", 0, NamingUnknown, false},
		{"1.manifest-4f1c", 0, NamingUnknown, false},
		{"99999999999999999999999.manifest", 0, NamingUnknown, false},
	}
	for _, tc := range tests {
		v, n, ok := parseManifestName(tc.name)
		if v != tc.version || n != tc.naming || ok != tc.ok {
			t.Errorf("parseManifestName(%q) = %d, %v, %v; want %d, %v, %v", tc.name, v, n, ok, tc.version, tc.naming, tc.ok)
		}
	}
}

func TestManifestNameRoundTrip(t *testing.T) {
	for _, naming := range []ManifestNaming{NamingV1, NamingV2} {
		for _, v := range []uint64{1, 2, 9, 10, 12345, math.MaxUint32 + 7} {
			name := manifestName(v, naming)
			got, n, ok := parseManifestName(name)
			if !ok || got != v || n != naming {
				t.Errorf("round trip of %d (%v) through %q gave %d, %v, %v", v, naming, name, got, n, ok)
			}
		}
	}
}
