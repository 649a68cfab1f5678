package exec

import (
	"fmt"
	"math/rand"
	"testing"

	"streamdb/catalog"
	"streamdb/plan"
	"streamdb/storage"
	"streamdb/types"
)

// TestJoinKeyedCache runs random changes through a full outer join in the
// keyed format with at most limit keys per side in memory (0: all),
// restarts it from Pebble every 7 epochs, and checks after every epoch
// that its output equals a join computed from scratch, and that the cache
// keeps to its bound (plus the keys the epoch touched, which stay until
// their write commits).
func TestJoinKeyedCache(t *testing.T) {
	for _, limit := range []int64{0, 2} {
		for _, vnodes := range []int{0, catalog.DefaultVNodes} {
			for _, packed := range [][2]bool{{true, true}, {false, false}, {true, false}} {
				testJoinKeyedCache(t, limit, vnodes, packed)
			}
		}
	}
}

// testJoinKeyedCache is one case of TestJoinKeyedCache; vnodes is the
// vnode count its page keys carry (0: none).
func testJoinKeyedCache(t *testing.T, limit int64, vnodes int, packed [2]bool) {
	seed := int64(7 + limit)
	rng := rand.New(rand.NewSource(seed))
	st := memoryStore(t)
	j := joinOnK(plan.FullJoin)
	out := &multiset{rows: map[string]int{}}
	var committed uint64
	bound := groupLimit{max: func() int64 { return limit }, committed: func() uint64 { return committed }}
	open := func() *joinOp {
		op, err := newCachedJoinOp(j, storage.StatePrefix(1, 2), st.DB(), joinStateByKey, vnodes, packed, bound, nil, out)
		if err != nil {
			t.Fatalf("limit %d vnodes %d packed %v: restore: %v", limit, vnodes, packed, err)
		}
		return op
	}
	op := open()
	var live [2][]types.Row
	reads := uint64(0)
	for epoch := uint64(1); epoch <= 80; epoch++ {
		for range rng.Intn(8) {
			side, c := randomJoinChange(rng, &live, 6)
			if err := op.port(side).Push(c); err != nil {
				t.Fatalf("seed %d limit %d vnodes %d packed %v epoch %d: %v", seed, limit, vnodes, packed, epoch, err)
			}
		}
		closeJoinEpoch(t, op, st, epoch)
		committed = epoch
		if want, got := fmt.Sprint(fullJoinOf(live[0], live[1])), fmt.Sprint(out.sorted()); want != got {
			t.Fatalf("seed %d limit %d vnodes %d packed %v epoch %d:\nwant %s\ngot  %s", seed, limit, vnodes, packed, epoch, want, got)
		}
		for side := range 2 {
			if n := int64(len(op.state[side])); limit > 0 && n > limit+8 {
				t.Fatalf("seed %d limit %d: side %d caches %d keys", seed, limit, side, n)
			}
		}
		reads += op.cache.reads
		if epoch%7 == 0 {
			op = open()
		}
	}
	if limit > 0 && limit < 6 && reads == 0 {
		t.Errorf("limit %d packed %v: no key was ever read back from Pebble", limit, packed)
	}
}
