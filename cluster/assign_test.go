package cluster

import (
	"fmt"
	"regexp"
	"slices"
	"testing"
)

func names(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("view_%d", i)
	}
	return out
}

func countBy(a map[string]string) map[string]int {
	c := map[string]int{}
	for _, m := range a {
		c[m]++
	}
	return c
}

func TestPreferred(t *testing.T) {
	for _, tc := range []struct {
		name    string
		members []string
		want    string
	}{
		{"none", nil, ""},
		{"one", []string{"a"}, "a"},
		{"same answer in any order", []string{"c", "a", "b"}, Preferred([]string{"a", "b", "c"}, KindView, "orders")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Preferred(tc.members, KindView, "orders"); got != tc.want {
				t.Fatalf("Preferred(%v) = %q, want %q", tc.members, got, tc.want)
			}
		})
	}
	// Views and sources of one name are placed independently.
	differ := 0
	for _, n := range names(100) {
		if Preferred([]string{"a", "b", "c"}, KindView, n) != Preferred([]string{"a", "b", "c"}, KindSource, n) {
			differ++
		}
	}
	if differ == 0 {
		t.Fatal("kinds share their placement")
	}
}

// TestAssignSpread: names spread evenly over 1, 2, 3 and 5 members.
func TestAssignSpread(t *testing.T) {
	const n = 3000
	for _, members := range [][]string{{"a"}, {"a", "b"}, {"a", "b", "c"}, {"m1", "m2", "m3", "m4", "m5"}} {
		c := countBy(Assign(members, KindView, names(n)))
		fair := n / len(members)
		for _, m := range members {
			if c[m] < fair*8/10 || c[m] > fair*12/10 {
				t.Errorf("members %v: %s has %d of %d names, want %d ±20%%", members, m, c[m], n, fair)
			}
		}
	}
}

// TestAssignMovesMinimally: a member that joins takes only names it now
// wins (about 1/N of them), each from its previous holder; one that
// leaves gives away only its own.
func TestAssignMovesMinimally(t *testing.T) {
	ns := names(2000)
	three := []string{"a", "b", "c"}
	before := Assign(three, KindView, ns)
	for _, tc := range []struct {
		name    string
		members []string
		moved   func(name, from, to string) bool // a move allowed
		share   float64                          // expected share moved
	}{
		{"join", []string{"a", "b", "c", "d"}, func(_, _, to string) bool { return to == "d" }, 0.25},
		{"leave", []string{"a", "c"}, func(_, from, _ string) bool { return from == "b" }, 1.0 / 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			after := Assign(tc.members, KindView, ns)
			moved := 0
			for _, n := range ns {
				if before[n] == after[n] {
					continue
				}
				moved++
				if !tc.moved(n, before[n], after[n]) {
					t.Fatalf("%s moved %s → %s", n, before[n], after[n])
				}
			}
			if want := tc.share * float64(len(ns)); float64(moved) < want*0.8 || float64(moved) > want*1.2 {
				t.Fatalf("%d of %d names moved, want about %.0f", moved, len(ns), want)
			}
		})
	}
	// Stable membership, stable placement: recomputing moves nothing.
	again := Assign(slices.Clone(three), KindView, ns)
	for _, n := range ns {
		if again[n] != before[n] {
			t.Fatalf("%s flapped: %s then %s", n, before[n], again[n])
		}
	}
}

var keyToken = regexp.MustCompile(`^[-_=a-zA-Z0-9]+$`)

func TestEncodeKey(t *testing.T) {
	for _, name := range []string{"orders", "Orders_2026-12", "a.b", "weird name/é*>", "=3d", "x"} {
		tok := EncodeKey(name)
		if !keyToken.MatchString(tok) {
			t.Errorf("EncodeKey(%q) = %q: not one KV key token", name, tok)
		}
		back, err := DecodeKey(tok)
		if err != nil || back != name {
			t.Errorf("DecodeKey(EncodeKey(%q)) = %q, %v", name, back, err)
		}
		kind, got, ok := parseLeaseKey(leaseKey(KindSource, name))
		if !ok || kind != KindSource || got != name {
			t.Errorf("parseLeaseKey(leaseKey(%q)) = %q %q %v", name, kind, got, ok)
		}
	}
	for _, bad := range []string{"a=", "a=4", "a=zz"} {
		if _, err := DecodeKey(bad); err == nil {
			t.Errorf("DecodeKey(%q) succeeded", bad)
		}
	}
}
