package exec

import (
	"math/rand"
	"testing"

	"streamdb/storage"
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
	prefix := ViewTablePrefix(9)
	type side struct {
		store     *storage.Store
		op        *materializeOp
		committed uint64
	}
	var sides []*side
	for _, mode := range []MaterializeMode{Counted, CountedSet} {
		s := &side{store: memoryStore(t)}
		var err error
		s.op, err = newMaterializeOp(mode, nil, prefix, storage.StatePrefix(9, viewMetaIndex), s.store,
			groupLimit{max: func() int64 { return 3 }, committed: func() uint64 { return s.committed }})
		if err != nil {
			t.Fatal(err)
		}
		sides = append(sides, s)
	}
	table := func(s *side) string { return viewTable(t, s.store, prefix, 2) }
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
			if err := s.op.Push(c); err != nil {
				t.Fatal(err)
			}
			b := s.store.NewBatch()
			if err := s.op.Barrier(Epoch{ID: epoch, Batch: b}); err != nil {
				t.Fatal(err)
			}
			if err := s.store.Commit(b, false); err != nil {
				t.Fatal(err)
			}
			b.Close()
			s.committed = epoch
		}
		if a, b := table(sides[0]), table(sides[1]); a != b {
			t.Fatalf("seed %d epoch %d: view tables differ\ncounts read: %s\nset:         %s", seed, epoch, a, b)
		}
		rows = max(rows, len(live))
	}
	if rows <= 3 {
		t.Fatalf("seed %d: never more than %d rows; the counted view never evicted", seed, rows)
	}
}
