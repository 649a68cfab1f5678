package exec

import (
	"slices"
	"sync/atomic"

	"streamdb/gcpace"
	"streamdb/metrics"
	"streamdb/storage"
)

// memoryBudget is the part of state.memory.budget that Pebble's block
// cache does not take (SetMemoryBudget): the bytes that the state caches
// of every running view share (aggregate groups and view rows, join keys,
// top-N rows), each counted at an estimated size per entry of its kind.
//
// The budget is shared max-min fairly ("water-filling"): every cache may
// hold up to one level of bytes, the level at which the caches' demands
// fill the budget. A cache that has not had to evict for a while is
// content and demands what it holds; one that has (it held more than its
// limit at one of its last barriers) may want more and demands as much as
// its own setting allows. A cache that never reports (one that keeps
// nothing in memory) demands nothing, and a new one nothing until it has
// to evict; either may still grow to the level. So small
// caches keep what they hold and the large ones split the rest equally,
// instead of every cache getting an equal share it may not use. The level
// is recomputed at every barrier from what the caches reported, and when
// views start and stop; caches apply it at their next barrier, so the
// caches together stay near the budget as views come and go and as their
// state grows. A per-kind setting of 0 keeps that kind's caches unbounded
// and out of the budget; a budget of 0 leaves only the per-kind settings.
//
// The sizes are estimates of a cached entry's heap (the entry, its key and
// row, and the map and list slots that index it) for narrow rows: the
// budget bounds entries, not measured bytes, so wide rows take more.
type memoryBudget struct {
	bytes atomic.Int64 // 0: no budget
	level atomic.Int64 // bytes each cache may hold; 0: no budget
	// round counts rebalances, the budget's clock (see cacheSlot.over).
	round atomic.Uint64
	// slots (under Runtime.mu) are the caches of running views.
	slots []*cacheSlot
	// settings are each kind's own setting (entries; 0: unbounded).
	settings map[cacheKind]*atomic.Int64
}

// cacheKind is a kind of state cache, with its estimated bytes per entry
// and the maps its bound applies to each (a join's two sides).
type cacheKind struct {
	name  string
	bytes int64
	parts int64
}

var (
	groupCacheKind = cacheKind{"groups", 320, 1}
	joinCacheKind  = cacheKind{"join_keys", 384, 2}
	topNCacheKind  = cacheKind{"topn_rows", 256, 1}
)

// minBudgetEntries is the least a budget cuts a cache to, so that a tiny
// budget slows a view down instead of making it reread Pebble per row.
const minBudgetEntries = 64

// limit returns the entries each part of a cache of kind k may keep: the
// lower of its setting (0: unbounded) and level bytes (0: no budget).
func (k cacheKind) limit(setting, level int64) int64 {
	if setting <= 0 || level <= 0 {
		return setting
	}
	return min(setting, max(level/(k.parts*k.bytes), minBudgetEntries))
}

// cacheSlot is one state cache's place in the budget.
type cacheSlot struct {
	budget  *memoryBudget
	kind    cacheKind
	setting *atomic.Int64 // the kind's own setting (entries; 0: unbounded)
	// held is the most entries one part held at its last barrier, and
	// limit the bound it was given then.
	held, limit atomic.Int64
	// over is the round of the cache's last barrier at which it held
	// more than its limit (0: never).
	over atomic.Uint64
}

// wantRounds is how many rebalances a cache that had to evict keeps
// asking for more: a cache evicts to three quarters of its limit and may
// take a few epochs to fill it again.
const wantRounds = 16

// groupLimit returns the bound of the cache in slot.
func (s *cacheSlot) groupLimit(committed func() uint64) groupLimit {
	return groupLimit{max: s.max, report: s.report, committed: committed}
}

// report records that each part of the cache holds at most held entries.
func (s *cacheSlot) report(held int64) {
	s.held.Store(held)
	if limit := s.limit.Load(); limit > 0 && held > limit {
		s.over.Store(s.budget.round.Load())
	}
}

// max returns the entries each part of the cache may keep: the lower of
// its setting and its share of the budget.
func (s *cacheSlot) max() int64 {
	n := s.kind.limit(s.setting.Load(), s.budget.level.Load())
	s.limit.Store(n)
	return n
}

// demand is the bytes the cache asks of the budget: what it holds if it
// is content, else what its setting allows.
func (s *cacheSlot) demand() int64 {
	per := s.kind.parts * s.kind.bytes
	over := s.over.Load()
	if over == 0 || s.budget.round.Load()-over > wantRounds {
		return s.held.Load() * per
	}
	return s.setting.Load() * per
}

// rebalance recomputes the level from the slots' demands. Caller holds
// Runtime.mu.
func (m *memoryBudget) rebalance() {
	m.round.Add(1)
	var level int64
	if budget := m.bytes.Load(); budget > 0 {
		var demands []int64
		for _, s := range m.slots {
			if s.setting.Load() > 0 { // else unbounded: outside the budget
				demands = append(demands, s.demand())
			}
		}
		level = waterLevel(budget, demands)
	}
	m.level.Store(level)
	for kind, setting := range m.settings {
		metrics.StateCacheLimit.WithLabelValues(kind.name).Set(float64(kind.limit(setting.Load(), level)))
	}
}

// waterLevel returns the most bytes one cache may hold so that caches
// with demands share budget max-min fairly: demands below the equal share
// of what the smaller ones leave are met in full, and the larger ones
// split the rest equally. With every demand met, the largest may grow
// into what is left.
func waterLevel(budget int64, demands []int64) int64 {
	if len(demands) == 0 {
		return budget
	}
	slices.Sort(demands)
	left := budget
	for i, d := range demands {
		if waiting := int64(len(demands) - i); d*waiting > left {
			return left / waiting
		}
		left -= d
	}
	return demands[len(demands)-1] + left
}

// SetMemoryBudget sets state.memory.budget in bytes (0: none). Pebble's
// block cache takes blockCacheShare of it and the operators' caches share
// the rest; without a budget the block cache keeps its default size. The
// garbage collector's headroom follows the whole budget too (gcpace).
func (rt *Runtime) SetMemoryBudget(n int64) {
	block, caches := int64(storage.DefaultBlockCacheLimit), n
	if n > 0 {
		block = n / blockCacheShare
		caches = n - block
	}
	storage.SetBlockCacheLimit(block)
	gcpace.SetBudget(n)
	rt.budget.bytes.Store(caches)
	rt.mu.Lock()
	rt.budget.rebalance()
	rt.mu.Unlock()
	metrics.StateMemoryBudget.Set(float64(n))
	metrics.BlockCacheLimit.Set(float64(storage.BlockCacheLimit()))
}

// blockCacheShare is the part of the budget (one in blockCacheShare) that
// goes to Pebble's block cache: enough that groups and rows evicted from
// the operators' caches are mostly read back from memory, while those
// caches, which spare the read altogether, keep most of it.
const blockCacheShare = 4

// recountCachesLocked collects the caches of running views, which share
// the budget, and rebalances it.
func (rt *Runtime) recountCachesLocked() {
	rt.budget.slots = rt.budget.slots[:0]
	for _, p := range rt.pipelines {
		rt.budget.slots = append(rt.budget.slots, p.caches...)
	}
	rt.budget.rebalance()
	metrics.StateCaches.Set(float64(len(rt.budget.slots)))
}

// cacheLimit returns the bound of a cache of kind for the view being
// built, counting it against the budget.
func (b *builder) cacheLimit(kind cacheKind, setting *atomic.Int64) groupLimit {
	return b.rt.cacheLimit(b.p, kind, setting)
}

// cacheLimit returns the bound of a cache of kind in pipeline p.
func (rt *Runtime) cacheLimit(p *pipeline, kind cacheKind, setting *atomic.Int64) groupLimit {
	s := &cacheSlot{budget: &rt.budget, kind: kind, setting: setting}
	p.caches = append(p.caches, s)
	return s.groupLimit(rt.CommittedEpoch)
}
