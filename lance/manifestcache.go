package lance

import (
	"io/fs"
	"sync"
	"time"
)

// A published manifest is immutable, so a decoded one can be reused for
// as long as its file is the same file. manifestCache keeps the few most
// recently used manifests of one table (a refresh touches the view's
// latest, the source's latest and the source at the watermark, which was
// the previous refresh's latest). An entry is keyed by the file's name,
// size and modification time: a table dropped and recreated writes new
// files with new times, so it can never be served a manifest of its
// former incarnation, and a stat (which every lookup makes) checks it.
const (
	manifestCacheEntries = 8
	manifestCacheBytes   = 64 << 20
)

type manifestKey struct {
	file  string
	size  int64
	mtime time.Time
}

func keyOf(file string, info fs.FileInfo) manifestKey {
	return manifestKey{file: file, size: info.Size(), mtime: info.ModTime()}
}

type manifestCache struct {
	mu      sync.Mutex
	entries []cacheEntry // most recently used last
	bytes   int
	hits    uint64
	misses  uint64
}

type cacheEntry struct {
	key manifestKey
	m   *Manifest
}

func (c *manifestCache) get(k manifestKey) *Manifest {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, e := range c.entries {
		if e.key == k {
			copy(c.entries[i:], c.entries[i+1:])
			c.entries[len(c.entries)-1] = e
			c.hits++
			return e.m
		}
	}
	c.misses++
	return nil
}

func (c *manifestCache) put(k manifestKey, m *Manifest) {
	n := len(m.raw)
	if n > manifestCacheBytes/2 {
		return // a huge manifest would evict everything else
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, e := range c.entries {
		if e.key == k {
			c.entries[i].m = m
			return
		}
	}
	c.entries = append(c.entries, cacheEntry{key: k, m: m})
	c.bytes += n
	for len(c.entries) > manifestCacheEntries || c.bytes > manifestCacheBytes {
		c.bytes -= len(c.entries[0].m.raw)
		c.entries[0] = cacheEntry{}
		c.entries = c.entries[1:]
	}
}

// ManifestCacheStats says how often a table's decoded manifests were
// reused (hits) or read and decoded (misses).
type ManifestCacheStats struct {
	Hits, Misses uint64
}

// ManifestCacheStats returns the manifest cache counters of the table,
// for tests and benchmarks.
func (t *Table) ManifestCacheStats() ManifestCacheStats {
	t.cache.mu.Lock()
	defer t.cache.mu.Unlock()
	return ManifestCacheStats{Hits: t.cache.hits, Misses: t.cache.misses}
}
