package lance

import (
	"sync"
	"sync/atomic"

	"github.com/mvd-project/mvd/lance/internal/pb/tablepb"
	"github.com/mvd-project/mvd/lance/internal/rowid"
)

// rowIDCache keeps decoded row-id sequences by fragment message.
// Consecutive manifests share the messages of the fragments a commit did
// not touch (fragmentMemo, shallowManifest), so a take of the rows a
// one-row commit added, which walks the fragments in order until it finds
// them, decodes only the new fragment's sequence instead of every
// fragment's: without it, a refresh's cost grows with the source's
// fragment count (issue 22). Messages and sequences are never edited, so
// both are shared. Two generations bound it: when the current one is
// full it becomes the old one, and a hit in the old one moves over.
type rowIDCache struct {
	mu       sync.Mutex
	cur, old map[*tablepb.DataFragment]*rowid.U64Sequence
	curBytes uint64
	// decodes counts the sequences decoded, lookups those asked for
	// (for tests).
	decodes, lookups atomic.Uint64
}

// rowIDCacheBytes bounds each generation's decoded sequences.
const rowIDCacheBytes = 16 << 20

func (c *rowIDCache) get(p *tablepb.DataFragment) *rowid.U64Sequence {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s := c.cur[p]; s != nil {
		return s
	}
	if s := c.old[p]; s != nil {
		c.addLocked(p, s, s.Footprint())
		return s
	}
	return nil
}

func (c *rowIDCache) put(p *tablepb.DataFragment, s *rowid.U64Sequence) {
	size := s.Footprint()
	if size > rowIDCacheBytes/8 {
		return // a big fragment's sequence is cheap to decode next to its rows
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.addLocked(p, s, size)
}

func (c *rowIDCache) addLocked(p *tablepb.DataFragment, s *rowid.U64Sequence, size uint64) {
	if _, ok := c.cur[p]; ok {
		return
	}
	if c.cur == nil || c.curBytes+size > rowIDCacheBytes {
		c.old, c.cur, c.curBytes = c.cur, map[*tablepb.DataFragment]*rowid.U64Sequence{}, 0
	}
	c.cur[p] = s
	c.curBytes += size
}
