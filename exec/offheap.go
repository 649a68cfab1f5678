package exec

import (
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// offHeapBytes is the memory offHeapWords has mapped and not yet released.
var offHeapBytes atomic.Int64

// offHeapWords returns n zeroed words mapped from the operating system
// outside the Go heap, and the function that unmaps them, to be called
// once nothing uses the words (nil when they came from the Go heap
// because the mapping failed). The words must hold no Go pointers: the
// garbage collector does not see them.
func offHeapWords(n int) ([]uint64, func()) {
	size := n * 8
	mem, err := unix.Mmap(-1, 0, max(size, 1), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
	if err != nil {
		return make([]uint64, n), nil
	}
	offHeapBytes.Add(int64(len(mem)))
	words := unsafe.Slice((*uint64)(unsafe.Pointer(unsafe.SliceData(mem))), n)
	return words, func() {
		if unix.Munmap(mem) == nil {
			offHeapBytes.Add(-int64(len(mem)))
		}
	}
}
