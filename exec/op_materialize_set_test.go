package exec

import (
	"math/rand"
	"testing"

	"streamdb/types"
)

// TestCountedSetView feeds the changelog of a keyed view (rows (k, v), one
// per key k: each change deletes a key's old row and may insert a new one)
// to a counted view that reads every multiplicity (keeping at most 3 in
// memory, so most are read back from Pebble) and to one in CountedSet
// mode, which writes them without reading, and checks that both write the
// same table after every epoch.
func TestCountedSetView(t *testing.T) {
	seed := int64(7)
	rng := rand.New(rand.NewSource(seed))
	sides := []*viewSide{newViewSide(t, Counted, 3), newViewSide(t, CountedSet, 3)}
	live := map[int64]int64{} // key -> its row's v
	rows := 0
	for epoch := uint64(1); epoch <= 300; epoch++ {
		c := &Chunk{}
		for range rng.Intn(8) {
			k := int64(rng.Intn(12))
			if v, ok := live[k]; ok {
				c.Append(types.Row{types.NewInt(k), types.NewInt(v)}, Delete)
				delete(live, k)
				if rng.Intn(3) == 0 {
					continue
				}
			}
			v := int64(rng.Intn(4))
			c.Append(types.Row{types.NewInt(k), types.NewInt(v)}, Insert)
			live[k] = v
		}
		for _, s := range sides {
			s.epoch(t, c, epoch, false)
		}
		if a, b := sides[0].table(t, 2), sides[1].table(t, 2); a != b {
			t.Fatalf("seed %d epoch %d: view tables differ\ncounts read: %s\nset:         %s", seed, epoch, a, b)
		}
		rows = max(rows, len(live))
	}
	if rows <= 3 {
		t.Fatalf("seed %d: never more than %d rows; the counted view never evicted", seed, rows)
	}
}
