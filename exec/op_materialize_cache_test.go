package exec

import (
	"math/rand"
	"testing"

	"streamdb/types"
)

// TestCountedViewCache runs random inserts and retractions of a few
// distinct rows into a counted (multiset) view that keeps every count in
// memory and one that may keep only 3, committing each epoch's batch one
// epoch late, and compares the two views' tables after every epoch.
func TestCountedViewCache(t *testing.T) {
	seed := int64(5)
	rng := rand.New(rand.NewSource(seed))
	sides := []*viewSide{newViewSide(t, Counted, 0), newViewSide(t, Counted, 3)}
	live := map[int64]int{}
	evictions := 0
	for epoch := uint64(1); epoch <= 300; epoch++ {
		c := &Chunk{}
		for range rng.Intn(8) {
			v := int64(rng.Intn(7))
			if live[v] > 0 && rng.Intn(2) == 0 {
				c.Append(types.Row{types.NewInt(v)}, Delete)
				live[v]--
			} else {
				c.Append(types.Row{types.NewInt(v)}, Insert)
				live[v]++
			}
		}
		for _, s := range sides {
			s.epoch(t, c, epoch, true)
		}
		if a, b := sides[0].table(t, 1), sides[1].table(t, 1); a != b {
			t.Fatalf("seed %d epoch %d: view tables differ\nall counts in memory: %s\nat most 3:            %s", seed, epoch, a, b)
		}
		if len(sides[1].op.counts) < len(sides[0].op.counts) {
			evictions++
		}
	}
	if evictions == 0 {
		t.Fatalf("seed %d: the bounded view never evicted a count; the test exercised nothing", seed)
	}
}
