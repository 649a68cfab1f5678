package exec

import (
	"bytes"
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"streamdb/plan"
	"streamdb/storage"
	"streamdb/types"
)

// TestMigrateJoinByKey: a full outer join's paged state (joinStateByPage,
// format DataflowSumSpecials) rewritten by joinPagesByKey holds the pages a
// join keyed by side and join key (DataflowJoinStateByKey) fed the same
// changes holds: byte for byte when no side is packed; with packed sides,
// whose pages gather a key's rows across epochs (some past joinPageBytes),
// the same pages with the same entries, only the page ids within a bucket
// numbered otherwise. A join started on the rewritten state, with every
// key in memory or a few, then emits what its twin emits.
func TestMigrateJoinByKey(t *testing.T) {
	for _, packed := range [][2]bool{{false, false}, {true, false}, {true, true}} {
		const seed = 31
		rng := rand.New(rand.NewSource(seed))
		st := memoryStore(t)
		j := joinOnK(plan.FullJoin)
		open := func(id uint32, format joinStateFormat, keys int64, out Operator) *joinOp {
			limit := groupLimit{}
			if keys > 0 {
				limit = groupLimit{max: func() int64 { return keys }, committed: func() uint64 { return ^uint64(0) }}
			}
			op, err := newCachedJoinOp(j, storage.StatePrefix(id, 2), st.DB(), format, 0, packed, limit, nil, out)
			if err != nil {
				t.Fatalf("seed %d packed %v: restore format %d: %v", seed, packed, format, err)
			}
			return op
		}
		var live [2][]types.Row
		epoch := uint64(0)
		// run feeds an epoch of changes to ops: on packed sides only
		// inserts (their inputs are append-only), long rows now and then
		// so that a key's pages fill.
		run := func(ops ...*joinOp) {
			epoch++
			for range rng.Intn(8) {
				side, c := randomJoinChange(rng, &live, 5)
				if packed[side] && c.Signs[0] == Delete {
					live[side] = append(live[side], c.Rows[0])
					continue
				}
				row := c.Rows[0]
				if c.Signs[0] == Insert && rng.Intn(4) == 0 {
					row[1] = types.NewString(strings.Repeat("x", 1000+rng.Intn(2000)))
				}
				for _, op := range ops {
					d := &Chunk{}
					d.Append(row, c.Signs[0])
					if err := op.port(side).Push(d); err != nil {
						t.Fatal(err)
					}
				}
			}
			for _, op := range ops {
				closeJoinEpoch(t, op, st, epoch)
			}
		}
		old, twin := open(1, joinStateByPage, 0, discard{}), open(2, joinStateByKey, 0, discard{})
		for range 150 {
			run(old, twin)
		}
		oldPrefix := storage.StatePrefix(1, 2)
		b := st.DB().NewIndexedBatch()
		if ok, err := joinPagesByKey(b, b, packed, oldPrefix); err != nil || !ok {
			t.Fatalf("seed %d packed %v: joinPagesByKey: ok %v, %v", seed, packed, ok, err)
		}
		if err := st.Commit(b, false); err != nil {
			t.Fatal(err)
		}
		b.Close()
		got, want := stateEntries(t, st, oldPrefix), stateEntries(t, st, storage.StatePrefix(2, 2))
		if packed != [2]bool{} {
			got, want = keyedPagesRanked(t, st, oldPrefix), keyedPagesRanked(t, st, storage.StatePrefix(2, 2))
		}
		if got != want {
			t.Fatalf("seed %d packed %v: the rewritten state\n%s\ndiffers from its twin's\n%s", seed, packed, got, want)
		}

		// Started on it, the join and its twin hold and emit the same,
		// with every key in memory, then with at most two per side.
		for _, keys := range []int64{0, 2} {
			gotOut, wantOut := netChanges{}, netChanges{}
			migrated := open(1, joinStateByKey, keys, gotOut)
			twin.next = wantOut
			if keys == 0 {
				if g, w := joinContents(migrated), joinContents(twin); g != w {
					t.Fatalf("seed %d packed %v: the migrated join restored\n%s\nits twin holds\n%s", seed, packed, g, w)
				}
			}
			for range 40 {
				run(migrated, twin)
				if fmt.Sprint(gotOut) != fmt.Sprint(wantOut) {
					t.Fatalf("seed %d packed %v keys %d, epoch %d: the migrated join emitted\n%v\nits twin\n%v", seed, packed, keys, epoch, gotOut, wantOut)
				}
			}
		}
	}

	// A page of another layout is left alone.
	st := memoryStore(t)
	bad := storage.StatePrefix(44, 2)
	if err := st.DB().Set(append(append([]byte(nil), bad...), 0, 1, 7), []byte{2, 0}, nil); err != nil {
		t.Fatal(err)
	}
	b := st.DB().NewIndexedBatch()
	defer b.Close()
	if ok, err := joinPagesByKey(b, b, [2]bool{true, true}, bad); err != nil || ok || b.Count() != 0 {
		t.Fatalf("joinPagesByKey of a bad page: ok %v, %d writes, %v", ok, b.Count(), err)
	}
}

// keyedPagesRanked lists a joinStateByKey state under prefix with each
// page id replaced by its rank within its bucket (side and join key).
func keyedPagesRanked(t *testing.T, st *storage.Store, prefix []byte) string {
	t.Helper()
	var sb strings.Builder
	var bucket []byte
	rank := 0
	err := storage.ScanPrefix(st.DB(), prefix, func(k, v []byte) error {
		k = k[len(prefix):]
		if len(k) < 8 {
			return fmt.Errorf("short key %x", k)
		}
		if b := k[:len(k)-8]; !bytes.Equal(b, bucket) {
			bucket, rank = append([]byte(nil), b...), 0
		}
		fmt.Fprintf(&sb, "%x|%d=%x\n", bucket, rank, v)
		rank++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return sb.String()
}
