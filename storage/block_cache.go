package storage

import (
	"sync"

	"github.com/cockroachdb/pebble/v2"
)

// The block cache holds state that the operators' own caches do not.
// Pebble manages that memory itself (C memory when built with cgo,
// pointer-free byte slices without), so unlike those caches' groups and
// rows, which the garbage collector walks on every cycle, its size costs
// the collector no marking work.
//
// The process has one Pebble block cache, shared by the state store and
// every read-only open of a checkpoint (AS OF, SUBSCRIBE between epochs,
// rollback's comparisons), so that its size is one figure the memory
// budget can account for instead of one cache per open database.
//
// Pebble cannot resize a cache, but it can reserve part of it: the cache is
// made with a capacity far above any real limit (memory is only taken as
// blocks are cached) and the part above the limit is reserved. Changing the
// limit swaps the reservation, and Pebble evicts down to the new size at
// once.
var blockCache struct {
	once    sync.Once
	c       *pebble.Cache
	mu      sync.Mutex
	limit   int64
	release func() // the current reservation
}

const (
	// blockCacheCapacity bounds any limit; it costs no memory by itself.
	blockCacheCapacity = 1 << 40
	// DefaultBlockCacheLimit is the block cache's size when no memory
	// budget sets it.
	DefaultBlockCacheLimit = 64 << 20
)

// sharedBlockCache returns the process's block cache, made on first use at
// DefaultBlockCacheLimit.
func sharedBlockCache() *pebble.Cache {
	blockCache.once.Do(func() {
		blockCache.c = pebble.NewCache(blockCacheCapacity)
		blockCache.mu.Lock()
		setBlockCacheLimitLocked(DefaultBlockCacheLimit)
		blockCache.mu.Unlock()
	})
	return blockCache.c
}

// SetBlockCacheLimit sets the bytes the block cache may hold (at least
// one); blocks beyond it are evicted now.
func SetBlockCacheLimit(n int64) {
	sharedBlockCache()
	blockCache.mu.Lock()
	defer blockCache.mu.Unlock()
	setBlockCacheLimitLocked(n)
}

func setBlockCacheLimitLocked(n int64) {
	n = min(max(n, 1), blockCacheCapacity)
	if n == blockCache.limit {
		return
	}
	// Two reservations together would leave the cache no room at all
	// (it would drop every block), so the old one goes first; blocks
	// cached in the moment between are evicted by the new one.
	if blockCache.release != nil {
		blockCache.release()
	}
	blockCache.release = blockCache.c.Reserve(int(blockCacheCapacity - n))
	blockCache.limit = n
}

// BlockCacheLimit returns the bytes the block cache may hold.
func BlockCacheLimit() int64 {
	sharedBlockCache()
	blockCache.mu.Lock()
	defer blockCache.mu.Unlock()
	return blockCache.limit
}
