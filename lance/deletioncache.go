package lance

import (
	"sync"

	"github.com/RoaringBitmap/roaring/v2"
)

// deletionCache keeps the decoded deletion files that change sets read
// last. A refresh after a delete compares the fragment's deletion file
// at the watermark with the new one, and the one at the watermark is the
// new one of the refresh before: kept, it is one open and decode fewer
// on the refresh's path. Deletion files are never rewritten (each
// version's has a new name, with a random part), so a name is a key; the
// fragment and the deleted-row count recorded with it guard the rest.
// Bitmaps handed out are shared: read-only.
type deletionCache struct {
	mu      sync.Mutex
	entries map[deletionKey]*roaring.Bitmap
	order   []deletionKey // oldest first
	bytes   uint64
}

type deletionKey struct {
	name     string
	fragment uint64
	deleted  uint64
}

// Bounds of what the cache holds: a few versions' worth of a table's
// deletion files, of any size up to a few MB.
const (
	deletionCacheEntries = 64
	deletionCacheBytes   = 8 << 20
)

func (c *deletionCache) get(k deletionKey) *roaring.Bitmap {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.entries[k]
}

func (c *deletionCache) put(k deletionKey, bm *roaring.Bitmap) {
	size := bm.GetSerializedSizeInBytes()
	if size > deletionCacheBytes/4 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries = map[deletionKey]*roaring.Bitmap{}
	}
	if _, ok := c.entries[k]; ok {
		return
	}
	for len(c.order) > 0 && (len(c.order) >= deletionCacheEntries || c.bytes+size > deletionCacheBytes) {
		old := c.order[0]
		c.order = c.order[1:]
		c.bytes -= c.entries[old].GetSerializedSizeInBytes()
		delete(c.entries, old)
	}
	c.entries[k] = bm
	c.order = append(c.order, k)
	c.bytes += size
}

// sharedDeletedOffsets is deletedOffsets through the table's deletion
// cache: the bitmap returned may be shared and must not be modified.
func (t *Table) sharedDeletedOffsets(f *Fragment) (*roaring.Bitmap, error) {
	if f.Deletion == nil {
		return roaring.New(), nil
	}
	k := deletionKey{name: f.Deletion.fileName(f.ID), fragment: f.ID, deleted: f.Deletion.NumDeletedRows}
	if bm := t.dels.get(k); bm != nil {
		return bm, nil
	}
	bm, err := t.deletedOffsets(f)
	if err != nil {
		return nil, err
	}
	t.dels.put(k, bm)
	return bm, nil
}
