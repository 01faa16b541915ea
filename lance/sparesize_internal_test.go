package lance

import "testing"

// TestSpareSize: a spare staging file is written ahead to whole pages with
// room for the next manifest to grow a little, and not at all for a
// manifest too big for writing ahead to pay (maxSpareSize).
func TestSpareSize(t *testing.T) {
	for _, tc := range []struct{ last, want int }{
		{0, 4096},
		{1000, 4096},
		{3000, 4096},
		{3700, 8192}, // 3700 + 462 + 512 > 4096
		{40 << 10, 49152},
		{200 << 10, 233472},
		{232 << 10, 0}, // past 256 KiB with its slack
		{1 << 20, 0},
	} {
		got := spareSize(tc.last)
		if got != tc.want {
			t.Errorf("spareSize(%d) = %d, want %d", tc.last, got, tc.want)
		}
		if got != 0 && (got%4096 != 0 || got < tc.last || got > maxSpareSize) {
			t.Errorf("spareSize(%d) = %d: not whole pages, too small or past %d", tc.last, got, maxSpareSize)
		}
	}
}
