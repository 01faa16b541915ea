package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/mvd-project/mvd/control/httpapi"
	"github.com/mvd-project/mvd/matview"
)

// compactFlags are --compact-small-fragments and --compact-deleted-percent
// of `mvd view create` and `alter`: when mvd serve compacts the view
// (matview.CompactPolicy, stored in the view's metadata).
type compactFlags struct {
	small                     int
	deleted                   float64
	smallSet, deletedSet, any bool
}

var compactFlagNames = []string{"compact-small-fragments", "compact-deleted-percent"}

func addCompactFlags(cmd *cobra.Command) *compactFlags {
	c := &compactFlags{}
	f := cmd.Flags()
	f.IntVar(&c.small, "compact-small-fragments", matview.DefaultCompactSmallFragments,
		"mvd serve compacts the view once it has more than `N` small fragments (negative: never for this reason)")
	f.Float64Var(&c.deleted, "compact-deleted-percent", matview.DefaultCompactDeletedPercent,
		"mvd serve rewrites the view's fragments once more than `PERCENT` of its rows are deleted (negative: never for this reason)")
	return c
}

func (c *compactFlags) read(cmd *cobra.Command) {
	f := cmd.Flags()
	c.smallSet, c.deletedSet = f.Changed("compact-small-fragments"), f.Changed("compact-deleted-percent")
	c.any = c.smallSet || c.deletedSet
}

// addTo sets the compaction fields of c from the flags given (package
// httpapi applies them, here or in the daemon).
func (c *compactFlags) addTo(cmd *cobra.Command, ch *httpapi.PolicyChange) {
	c.read(cmd)
	if c.smallSet {
		small := c.small
		ch.CompactSmallFragments = &small
	}
	if c.deletedSet {
		deleted := c.deleted
		ch.CompactDeletedPercent = &deleted
	}
}

// merge applies the flags given to base (the view's policy, or the
// default) and validates the result; a bad value is a usage mistake.
func (c *compactFlags) merge(cmd *cobra.Command, base matview.CompactPolicy) (matview.CompactPolicy, error) {
	c.read(cmd)
	out := base
	if c.smallSet {
		out.SmallFragments = c.small
	}
	if c.deletedSet {
		out.DeletedPercent = c.deleted
	}
	if err := out.Validate(); err != nil {
		return out, usagef("%v", err)
	}
	return out, nil
}

// storedCompactPolicy is the view's compaction policy; an unreadable one
// is the default (alter replaces it).
func storedCompactPolicy(md map[string]string) matview.CompactPolicy {
	p, err := matview.CompactPolicyFromMetadata(md, matview.DefaultCompactPolicy())
	if err != nil {
		return matview.DefaultCompactPolicy()
	}
	return p
}

func describeCompact(p matview.CompactPolicy) string {
	s := "compacted"
	if p.SmallFragments >= 0 {
		s += fmt.Sprintf(" beyond %d small fragments", p.SmallFragments)
	}
	if p.DeletedPercent >= 0 {
		if p.SmallFragments >= 0 {
			s += " or"
		}
		s += fmt.Sprintf(" beyond %v%% deleted rows", p.DeletedPercent)
	}
	if p.SmallFragments < 0 && p.DeletedPercent < 0 {
		s = "never compacted by mvd serve"
	}
	return s
}
