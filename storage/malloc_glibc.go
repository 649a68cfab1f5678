//go:build linux && cgo

package storage

/*
#include <malloc.h>
#include <stdlib.h>

// streamdb_tune_malloc fixes glibc's mmap threshold and caps its arenas;
// a value of 0 or less leaves that option alone. Fixing the threshold
// (any M_MMAP_THRESHOLD call) also turns off glibc's dynamic threshold,
// which otherwise rises to the size of each large block freed, so that
// later blocks of that size come from the arenas instead.
static void streamdb_tune_malloc(int mmap_threshold, int arena_max) {
#ifdef M_MMAP_THRESHOLD
	if (mmap_threshold > 0) mallopt(M_MMAP_THRESHOLD, mmap_threshold);
#endif
#ifdef M_ARENA_MAX
	if (arena_max > 0) mallopt(M_ARENA_MAX, arena_max);
#endif
}

// streamdb_is_mmapped reports whether glibc served block p by mmap: the
// IS_MMAPPED bit (2) of the size word in front of it. Read from the block
// itself, it does not depend on what other threads allocate meanwhile.
static int streamdb_is_mmapped(void *p) { return (((size_t *)p)[-1] & 2) != 0; }
*/
import "C"

import (
	"os"
	"unsafe"
)

// mmapThreshold is the size from which C allocations are mmapped, and so
// go back to the system the moment they are freed.
const mmapThreshold = 256 << 10

// arenaMax caps glibc's malloc arenas: without a cap it makes up to eight
// per core as Go's threads call into C.
const arenaMax = 2

// TuneCAllocator sets glibc's allocator up for Pebble, which keeps its
// memtables and cached blocks in C memory (manual allocation): large
// blocks are allocated and freed all the time, and with glibc's defaults
// the freed ones stay in the process, so its RSS grows in a steady state
// although Pebble's memory does not. An operator's MALLOC_MMAP_THRESHOLD_
// or MALLOC_ARENA_MAX in the environment wins. Call it once, at start.
func TuneCAllocator() {
	threshold, arenas := mmapThreshold, arenaMax
	if os.Getenv("MALLOC_MMAP_THRESHOLD_") != "" {
		threshold = -1
	}
	if os.Getenv("MALLOC_ARENA_MAX") != "" {
		arenas = -1
	}
	C.streamdb_tune_malloc(C.int(threshold), C.int(arenas))
}

// largeBlocksMmapped reports whether, after a large block is freed, a
// smaller large block is still mmapped (see TuneCAllocator). glibc serves
// a block from free chunks its arenas already hold before it considers
// mmap, and other threads may have left some of 1 MiB or more, so it
// takes 1 MiB blocks until one is mmapped or more than such chunks could
// plausibly hold (256 MiB) came from the arenas: with the threshold fixed
// the first block past them is mmapped; with the dynamic threshold raised
// to 4 MiB none is.
func largeBlocksMmapped() bool {
	C.free(C.malloc(4 << 20))
	var held []unsafe.Pointer
	defer func() {
		for _, p := range held {
			C.free(p)
		}
	}()
	for range 256 {
		p := C.malloc(1 << 20)
		held = append(held, p)
		if C.streamdb_is_mmapped(p) != 0 {
			return true
		}
	}
	return false
}
