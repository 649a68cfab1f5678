package exec

import (
	"sync"
	"sync/atomic"

	"streamdb/storage"
)

// cacheStats count the lookups of the in-memory cache an operator keeps
// over one of its Pebble state tables: hits the cache answered, and reads
// that went to Pebble. A lookup of a key that cannot be in Pebble (a new
// key, see missRule) is neither. Only the pipeline's goroutine adds; the
// figures are read at any time (streamdb_operators, /metrics).
type cacheStats struct {
	hits, reads atomic.Int64
}

// cacheStatsByTable holds the figures by state table (the first
// stateTableKeyLen bytes of its prefix), so that an operator restarted
// in the same process (ALTER, ROLLBACK TO) goes on counting.
var cacheStatsByTable sync.Map

// stateTableKeyLen is the length of storage.StatePrefix: kind, object id,
// state table index.
const stateTableKeyLen = 7

// cacheStatsFor returns the figures of the state table prefix falls in.
func cacheStatsFor(prefix []byte) *cacheStats {
	if len(prefix) < stateTableKeyLen {
		return nil
	}
	v, _ := cacheStatsByTable.LoadOrStore(string(prefix[:stateTableKeyLen]), &cacheStats{})
	return v.(*cacheStats)
}

// cacheFigures sums the cache figures of object obj's state tables.
func cacheFigures(obj uint32, tables []uint16) (hits, reads int64, ok bool) {
	for _, t := range tables {
		v, found := cacheStatsByTable.Load(string(storage.StatePrefix(obj, t)))
		if !found {
			continue
		}
		st := v.(*cacheStats)
		hits += st.hits.Load()
		reads += st.reads.Load()
		ok = true
	}
	return hits, reads, ok
}

// forgetCacheFigures drops the figures of object obj's state tables (the
// object was dropped).
func forgetCacheFigures(obj uint32) {
	prefix := string(storage.ObjectStatePrefix(obj))
	cacheStatsByTable.Range(func(k, _ any) bool {
		if key := k.(string); len(key) >= len(prefix) && key[:len(prefix)] == prefix {
			cacheStatsByTable.Delete(k)
		}
		return true
	})
}
