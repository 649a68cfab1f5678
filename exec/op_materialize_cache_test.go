package exec

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/cockroachdb/pebble/v2"

	"streamdb/storage"
	"streamdb/types"
)

// TestCountedViewCache runs random inserts and retractions of a few
// distinct rows into a counted (multiset) view that keeps every count in
// memory and one that may keep only 3, committing each epoch's batch one
// epoch late, and compares the two views' tables after every epoch.
func TestCountedViewCache(t *testing.T) {
	seed := int64(5)
	rng := rand.New(rand.NewSource(seed))
	prefix := ViewTablePrefix(9)
	type side struct {
		store     *storage.Store
		op        *materializeOp
		pending   *pebble.Batch
		committed uint64
		limit     int64
	}
	var sides []*side
	for _, limit := range []int64{0, 3} {
		st := memoryStore(t)
		s := &side{store: st, limit: limit}
		var err error
		s.op, err = newMaterializeOp(Counted, nil, prefix, storage.StatePrefix(9, viewMetaIndex), st,
			groupLimit{max: func() int64 { return s.limit }, committed: func() uint64 { return s.committed }})
		if err != nil {
			t.Fatal(err)
		}
		sides = append(sides, s)
	}
	table := func(s *side) string { return viewTable(t, s.store, prefix, 1) }
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
			if err := s.op.Push(c); err != nil {
				t.Fatal(err)
			}
			if s.pending != nil {
				if err := s.store.Commit(s.pending, false); err != nil {
					t.Fatal(err)
				}
				s.pending.Close()
				s.committed = epoch - 1
			}
			s.pending = s.store.NewBatch()
			if err := s.op.Barrier(Epoch{ID: epoch, Batch: s.pending}); err != nil {
				t.Fatal(err)
			}
		}
		if a, b := table(sides[0]), table(sides[1]); a != b {
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

// viewTable renders a view's table under prefix: each row of ncols
// columns with its multiplicity, in key order.
func viewTable(t *testing.T, st *storage.Store, prefix []byte, ncols int) string {
	t.Helper()
	var out []string
	err := storage.ScanPrefix(st.DB(), prefix, func(_, v []byte) error {
		row, n, err := DecodeViewValue(v, ncols)
		out = append(out, fmt.Sprint(row, n))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprint(out)
}
