package storage

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestBlockCacheLimit checks that the block cache every store shares holds
// what reads bring in up to its limit, that lowering the limit evicts at
// once, that later reads stay under it, and that raising it lets the cache
// grow again.
func TestBlockCacheLimit(t *testing.T) {
	defer SetBlockCacheLimit(DefaultBlockCacheLimit)
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// 24 MiB of values that do not compress, flushed to sstables so that
	// reads go through the block cache.
	const rows, size = 12 << 10, 2 << 10
	rng := rand.New(rand.NewPCG(1, 2))
	val := make([]byte, size)
	for lo := 0; lo < rows; lo += 256 {
		b := s.NewBatch()
		for i := lo; i < lo+256; i++ {
			for j := 0; j < size; j += 8 {
				binary.LittleEndian.PutUint64(val[j:], rng.Uint64())
			}
			if err := b.Set([]byte(fmt.Sprintf("k%08d", i)), val, nil); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Commit(b, false); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	readAll := func() {
		t.Helper()
		for i := 0; i < rows; i++ {
			if _, ok, err := s.Get([]byte(fmt.Sprintf("k%08d", i))); err != nil || !ok {
				t.Fatalf("k%08d: found %v, %v", i, ok, err)
			}
		}
	}
	cached := func() int64 { return s.DB().Metrics().BlockCache.Size }

	SetBlockCacheLimit(64 << 20)
	readAll()
	if got := cached(); got < 16<<20 {
		t.Fatalf("with a 64 MiB limit, reading 24 MiB cached only %d bytes", got)
	}
	SetBlockCacheLimit(4 << 20)
	if got := BlockCacheLimit(); got != 4<<20 {
		t.Fatalf("BlockCacheLimit() = %d after setting 4 MiB", got)
	}
	if got := cached(); got > 4<<20 {
		t.Fatalf("after lowering the limit to 4 MiB the cache holds %d bytes", got)
	}
	readAll()
	if got := cached(); got > 4<<20 {
		t.Fatalf("reading under a 4 MiB limit cached %d bytes", got)
	}
	SetBlockCacheLimit(64 << 20)
	readAll()
	if got := cached(); got < 16<<20 {
		t.Fatalf("after raising the limit back to 64 MiB, reading 24 MiB cached only %d bytes", got)
	}
}
