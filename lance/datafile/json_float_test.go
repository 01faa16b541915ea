package datafile

import (
	"math"
	"strconv"
	"testing"
)

func TestAppendFloatFormat(t *testing.T) {
	tests := []struct {
		f    float64
		bits int
		want string
	}{
		{1e6, 64, "1000000"},
		{1234567.5, 64, "1234567.5"},
		{1e21, 64, "1e+21"},
		{1e-7, 64, "1e-7"},
		{1.5e-10, 64, "1.5e-10"},
		{0.000001, 64, "0.000001"},
		{0.1, 64, "0.1"},
		{math.Copysign(0, -1), 64, "-0"},
		{float64(float32(0.1)), 32, "0.1"},
		{float64(float32(3.4e38)), 32, "3.4e+38"},
		{math.NaN(), 64, `"NaN"`},
		{math.Inf(-1), 32, `"-Infinity"`},
	}
	for _, tc := range tests {
		if got := string(appendFloat(nil, tc.f, tc.bits)); got != tc.want {
			t.Errorf("appendFloat(%v, %d) = %s, want %s", tc.f, tc.bits, got, tc.want)
		}
	}
}

// TestHalfRoundTrip: every finite float16 renders as a decimal that rounds
// back to it, and floatToHalf agrees with halfToFloat on all 65536 values.
func TestHalfRoundTrip(t *testing.T) {
	for h := 0; h < 1<<16; h++ {
		f := halfToFloat(uint16(h))
		if math.IsNaN(f) {
			continue
		}
		if got := floatToHalf(f); got != uint16(h) {
			t.Fatalf("floatToHalf(halfToFloat(%#04x)) = %#04x", h, got)
		}
		if math.IsInf(f, 0) {
			continue
		}
		out := string(appendHalf(nil, uint16(h)))
		back, err := strconv.ParseFloat(out, 64)
		if err != nil || floatToHalf(back) != uint16(h) {
			t.Fatalf("appendHalf(%#04x) = %s, which does not round back", h, out)
		}
	}
	for _, tc := range []struct {
		h    uint16
		want string
	}{
		{0x3c00, "1"}, {0xc000, "-2"}, {0x7bff, "65500"}, {0x0001, "6e-8"},
		{0x3555, "0.3333"}, {0x2e66, "0.1"}, {0x7c00, `"Infinity"`}, {0x8000, "-0"},
		{0x4c08, "16.13"}, {0xcc08, "-16.13"}, // 16.125: the tie between 16.12 and 16.13 goes up
	} {
		if got := string(appendHalf(nil, tc.h)); got != tc.want {
			t.Errorf("appendHalf(%#04x) = %s, want %s", tc.h, got, tc.want)
		}
	}
	// Ties round to even: 1 + 2^-11 is halfway between 1 and 1 + 2^-10.
	if got := floatToHalf(1 + 0x1p-11); got != 0x3c00 {
		t.Errorf("tie rounded to %#04x", got)
	}
	if got := floatToHalf(65520); got != 0x7c00 {
		t.Errorf("65520 rounded to %#04x, want infinity", got)
	}
}
