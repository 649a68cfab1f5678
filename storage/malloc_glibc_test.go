//go:build linux && cgo

package storage

import "testing"

// TestTuneCAllocator checks that after TuneCAllocator a freed large block
// does not raise the mmap threshold: the next large block is still mmapped,
// so it returns to the system when freed. With glibc's dynamic threshold
// it would come from an arena.
func TestTuneCAllocator(t *testing.T) {
	TuneCAllocator()
	if !largeBlocksMmapped() {
		t.Fatal("a 1 MiB block after freeing a 4 MiB one came from a malloc arena: the mmap threshold is not fixed")
	}
}
