package lance

import "testing"

func TestVersionNotFound(t *testing.T) {
	refs := func(vs ...uint64) []VersionRef {
		out := make([]VersionRef, len(vs))
		for i, v := range vs {
			out[i] = VersionRef{Version: v}
		}
		return out
	}
	for _, tc := range []struct {
		v    uint64
		have []VersionRef
		want string
	}{
		{9, refs(1, 2, 3, 4), "the table has versions 1-4"},
		{3, refs(1, 2, 4, 5), "version 3 is missing (the table has versions 1-2, 4-5)"},
		{6, refs(1, 2, 4, 5), "the table has versions 1-2, 4-5"},
		{2, refs(1, 3, 7, 8, 9), "version 2 is missing (the table has versions 1, 3, 7-9)"},
		{1, refs(5), "the table has only version 5"},
		{4, refs(3, 5), "version 4 is missing (the table has versions 3, 5)"},
	} {
		if got := versionNotFound(tc.v, tc.have); got != tc.want {
			t.Errorf("versionNotFound(%d) = %q, want %q", tc.v, got, tc.want)
		}
	}
}
