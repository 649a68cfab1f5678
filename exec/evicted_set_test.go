package exec

import (
	"runtime"
	"strconv"
	"testing"
	"time"
)

// The evicted-key filters grow with every key an operator ever evicted;
// their bits must stay outside the Go heap (so they do not raise the
// collector's goal) and be released once the set is unreachable.
func TestEvictedSetBitsOutsideHeap(t *testing.T) {
	heapAlloc := func() int64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return int64(ms.HeapAlloc)
	}
	heapBefore := heapAlloc()

	s := new(evictedSet)
	const keys = 1 << 21 // the fifth filter: 4M keys of capacity, about 10 MB of bits
	var buf []byte
	for i := range keys {
		buf = strconv.AppendInt(buf[:0], int64(i), 10)
		s.add(string(buf))
	}
	for i := 0; i < keys; i += 997 {
		if k := strconv.Itoa(i); !s.mayContain(k) {
			t.Fatalf("key %q added but not reported", k)
		}
	}
	var bits int64
	for _, f := range s.filters {
		bits += int64(f.Cap()) / 8
	}
	heap := heapAlloc() - heapBefore
	mapped := offHeapBytes.Load() // other sets released meanwhile only lower it
	if mapped < bits {
		t.Errorf("%d bytes mapped outside the heap, want at least the filters' %d bytes of bits", mapped, bits)
	}
	if heap > bits/10 {
		t.Errorf("the Go heap grew by %d bytes for %d bytes of filter bits: the bits are on the heap", heap, bits)
	}
	runtime.KeepAlive(s)

	s = nil
	for deadline := time.Now().Add(10 * time.Second); offHeapBytes.Load() > mapped-bits; {
		if time.Now().After(deadline) {
			t.Fatalf("%d of the set's %d bytes still mapped after it became unreachable", offHeapBytes.Load()-(mapped-bits), bits)
		}
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
}
