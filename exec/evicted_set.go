package exec

import (
	"runtime"

	"github.com/bits-and-blooms/bloom/v3"
)

// evictedSet remembers keys, approximately: a chain of Bloom filters, each
// sized for twice the keys of the one before, so that it grows with the
// keys it holds at about 1 bit in 10,000 of false positives per filter. A
// false positive costs only a Pebble read that finds nothing; a key added
// is always reported. About 2.4 bytes per key.
//
// The filters' bits live outside the Go heap (offHeapWords). They grow with
// every key an operator has ever evicted (more than 2.4 bytes per key while
// the newest filter fills) and hold no pointers, so the collector has nothing to
// mark in them; on the heap they would still count as live heap, from which
// the collector's headroom is set (gcpace: up to twice the live heap,
// within the memory budget), and so let the process grow by up to that
// much more in garbage.
type evictedSet struct {
	filters []*bloom.BloomFilter
	room    uint // keys the newest filter takes before the next is made
	size    uint // keys the newest filter was made for
}

// firstEvictedFilter is the key capacity of the first filter.
const firstEvictedFilter = 1 << 16

func (s *evictedSet) add(key string) {
	if s.room == 0 {
		s.size = max(2*s.size, firstEvictedFilter)
		s.filters = append(s.filters, newOffHeapFilter(s.size, 1e-4))
		s.room = s.size
	}
	s.filters[len(s.filters)-1].AddString(key)
	s.room--
}

func (s *evictedSet) mayContain(key string) bool {
	for _, f := range s.filters {
		if f.TestString(key) {
			return true
		}
	}
	return false
}

// newOffHeapFilter returns a Bloom filter for n keys at false-positive
// rate fp whose bits are outside the Go heap and are released once the
// filter is unreachable.
func newOffHeapFilter(n uint, fp float64) *bloom.BloomFilter {
	m, k := bloom.EstimateParameters(n, fp)
	words, release := offHeapWords(int((m + 63) / 64))
	f := bloom.FromWithM(words, m, k)
	if release != nil {
		runtime.AddCleanup(f, func(release func()) { release() }, release)
	}
	return f
}
