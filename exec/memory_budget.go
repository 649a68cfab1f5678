package exec

import (
	"sync/atomic"

	"streamdb/metrics"
	"streamdb/storage"
)

// memoryBudget is the part of state.memory.budget that Pebble's block
// cache does not take (SetMemoryBudget): the bytes that the state caches
// of every running view share (aggregate groups and view rows, join keys,
// top-N rows). Each cache of a running view gets an equal share, turned
// into entries at an estimated size per entry of its kind, and keeps at
// most that many entries, or its own setting's count if that is lower.
// The share is recomputed when views start and stop, and caches apply it
// at their next barrier, so the caches together stay near the budget as
// views come and go. A per-kind setting of 0 keeps that kind's caches
// unbounded and out of the budget; a budget of 0 leaves only the per-kind
// settings.
//
// The sizes are estimates of a cached entry's heap (the entry, its key and
// row, and the map and list slots that index it) for narrow rows: the
// budget bounds entries, not measured bytes, so wide rows take more.
type memoryBudget struct {
	bytes  atomic.Int64 // 0: no budget
	caches atomic.Int64 // caches of running views
}

// cacheKind is a kind of state cache, with its estimated bytes per entry.
type cacheKind struct {
	name  string
	bytes int64
}

var (
	groupCacheKind = cacheKind{"groups", 320}
	joinCacheKind  = cacheKind{"join_keys", 384}
	topNCacheKind  = cacheKind{"topn_rows", 256}
)

// minBudgetEntries is the least a budget cuts a cache to, so that a tiny
// budget slows a view down instead of making it reread Pebble per row.
const minBudgetEntries = 64

// limitFor returns the entry bound of a cache of kind whose own setting
// is setting: the lower of it and the cache's share of the budget.
func (m *memoryBudget) limitFor(kind cacheKind, setting *atomic.Int64) func() int64 {
	gauge := metrics.StateCacheLimit.WithLabelValues(kind.name)
	return func() int64 {
		n := setting.Load()
		if n <= 0 {
			return n
		}
		if share := m.share(kind); share > 0 && share < n {
			n = share
		}
		gauge.Set(float64(n))
		return n
	}
}

// share is the entries a cache of kind may keep under the budget; 0 when
// there is no budget.
func (m *memoryBudget) share(kind cacheKind) int64 {
	b := m.bytes.Load()
	if b <= 0 {
		return 0
	}
	return max(b/max(m.caches.Load(), 1)/kind.bytes, minBudgetEntries)
}

// SetMemoryBudget sets state.memory.budget in bytes (0: none). Pebble's
// block cache takes blockCacheShare of it and the operators' caches share
// the rest; without a budget the block cache keeps its default size.
func (rt *Runtime) SetMemoryBudget(n int64) {
	block, caches := int64(storage.DefaultBlockCacheLimit), n
	if n > 0 {
		block = n / blockCacheShare
		caches = n - block
	}
	storage.SetBlockCacheLimit(block)
	rt.budget.bytes.Store(caches)
	metrics.StateMemoryBudget.Set(float64(n))
	metrics.BlockCacheLimit.Set(float64(storage.BlockCacheLimit()))
}

// blockCacheShare is the part of the budget (one in blockCacheShare) that
// goes to Pebble's block cache: enough that groups and rows evicted from
// the operators' caches are mostly read back from memory, while those
// caches, which spare the read altogether, keep most of it.
const blockCacheShare = 4

// recountCachesLocked recomputes the caches of running views, which
// share the budget.
func (rt *Runtime) recountCachesLocked() {
	var n int64
	for _, p := range rt.pipelines {
		n += p.caches
	}
	rt.budget.caches.Store(n)
	metrics.StateCaches.Set(float64(n))
}

// cacheLimit returns the bound of a cache of kind for the view being
// built, counting it against the budget.
func (b *builder) cacheLimit(kind cacheKind, setting *atomic.Int64) groupLimit {
	b.p.caches++
	return groupLimit{max: b.rt.budget.limitFor(kind, setting), committed: b.rt.CommittedEpoch}
}
