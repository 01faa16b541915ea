package main

import "strconv"

// counted spells n with noun, in the singular for exactly one ("1 fragment",
// "0 fragments", "2 fragments"). noun is a regular English noun.
func counted[N ~int | ~int64 | ~uint64](n N, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.FormatInt(int64(n), 10) + " " + noun + "s"
}
