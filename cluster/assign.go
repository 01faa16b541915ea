package cluster

import (
	"sort"

	"github.com/cespare/xxhash/v2"
)

// Kind is what a lease is for.
type Kind string

// The kinds of leases.
const (
	// KindView leases a view: its holder runs the view's owner.
	KindView Kind = "view"
	// KindSource leases a source table: its holder watches it and
	// publishes its change sets for every instance.
	KindSource Kind = "source"
)

// weight is the rendezvous weight of member for (kind, name).
func weight(kind Kind, name, member string) uint64 {
	d := xxhash.New()
	_, _ = d.WriteString(string(kind))
	_, _ = d.Write([]byte{0})
	_, _ = d.WriteString(name)
	_, _ = d.Write([]byte{0})
	_, _ = d.WriteString(member)
	return d.Sum64()
}

// Preferred is the member that should hold (kind, name) among members
// (instance ids, in any order): the one of highest rendezvous weight,
// ties to the smaller id. "" if members is empty. It depends only on its
// arguments: every instance computes the same answer from the same
// membership, a member's arrival moves to it only the names it now wins,
// and a member's departure moves only its own names.
func Preferred(members []string, kind Kind, name string) string {
	best, bestW := "", uint64(0)
	for _, m := range members {
		w := weight(kind, name, m)
		if best == "" || w > bestW || (w == bestW && m < best) {
			best, bestW = m, w
		}
	}
	return best
}

// Assign is Preferred for every name: name → member.
func Assign(members []string, kind Kind, names []string) map[string]string {
	out := make(map[string]string, len(names))
	for _, n := range names {
		out[n] = Preferred(members, kind, n)
	}
	return out
}

// sortedKeys returns m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
