package main

import "testing"

func TestCounted(t *testing.T) {
	for _, c := range []struct {
		n    int64
		noun string
		want string
	}{
		{0, "version", "0 versions"},
		{1, "version", "1 version"},
		{2, "fragment", "2 fragments"},
		{-1, "row", "-1 rows"},
		{1 << 40, "byte", "1099511627776 bytes"},
	} {
		if got := counted(c.n, c.noun); got != c.want {
			t.Errorf("counted(%d, %q) = %q, want %q", c.n, c.noun, got, c.want)
		}
	}
}
