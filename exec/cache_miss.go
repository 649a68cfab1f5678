package exec

import (
	"streamdb/storage"
)

// missRule tells an operator that caches a Pebble state table in memory
// whether a key missing from its cache can be in Pebble. If the table was
// empty when the operator started, a key can only be there if the cache
// evicted it since: the rule remembers evicted keys (approximately, see
// evictedSet), and a miss on any other key is a new key that needs no
// Pebble read. Without this every new group (each new window of a
// windowed aggregate, say) would cost a point lookup that finds nothing,
// and once a cache over its bound had evicted anything, every one would.
type missRule struct {
	storeMayHold bool // the table held rows at start: every miss reads
	evicted      evictedSet
	stats        *cacheStats // of the state table (cache_stats.go)
}

// newMissRule looks at the operator's state table once, at start.
func newMissRule(r storage.Reader, prefix []byte) (missRule, error) {
	held, err := storage.HasPrefix(r, prefix)
	return missRule{storeMayHold: held, stats: cacheStatsFor(prefix)}, err
}

// mustRead reports whether a cache miss on key has to be looked up in
// Pebble, and counts the lookups that do.
func (m *missRule) mustRead(key string) bool {
	read := m.storeMayHold || m.evicted.mayContain(key)
	if read && m.stats != nil {
		m.stats.reads.Add(1)
	}
	return read
}

// hit counts a lookup the cache answered from memory.
func (m *missRule) hit() {
	if m.stats != nil {
		m.stats.hits.Add(1)
	}
}

// evictedKey records that the cache dropped key (now only in Pebble).
func (m *missRule) evictedKey(key string) {
	if !m.storeMayHold {
		m.evicted.add(key)
	}
}
