package exec

import (
	"testing"

	"streamdb/expr"
	"streamdb/plan"
	"streamdb/storage"
	"streamdb/types"
)

// TestJoinExpiryOverEvictedRows runs a join that frees rows by watermark
// with one join key per side in memory, so that most rows are only in
// Pebble when the watermark passes them, and restarts it from Pebble
// midway. Once the watermarks pass every row, Pebble holds none of them,
// and the rows of evicted buckets do not stay in memory through the
// expiry heap.
func TestJoinExpiryOverEvictedRows(t *testing.T) {
	cols := []types.Column{{Name: "k", Type: types.Int8}, {Name: "ts", Type: types.Int8}}
	j := &plan.Join{Kind: plan.InnerJoin,
		LeftKeys:  []expr.Expr{&expr.ColRef{Idx: 0, T: types.Int8}},
		RightKeys: []expr.Expr{&expr.ColRef{Idx: 0, T: types.Int8}},
		Left:      &plan.Scan{Cols: cols}, Right: &plan.Scan{Cols: cols},
		Cols: append(append([]types.Column(nil), cols...), cols...)}
	st := memoryStore(t)
	prefix := storage.StatePrefix(1, 2)
	var wm [2]watermarkState // wm[side] frees the other side's rows
	var committed uint64
	bound := groupLimit{max: func() int64 { return 1 }, committed: func() uint64 { return committed }}
	open := func() *joinOp {
		x := &joinExpiry{}
		for side := range 2 {
			x.sides[side] = &sideExpiry{col: 1, wm: &wm[1-side]}
		}
		op, err := newCachedJoinOp(j, prefix, st.DB(), joinStateByKey, [2]bool{true, false}, bound, x, discard{})
		if err != nil {
			t.Fatal(err)
		}
		return op
	}
	stored := func() (n int) {
		t.Helper()
		err := storage.ScanPrefix(st.DB(), prefix, func(k, v []byte) error {
			side, _, _, err := readKeyedPageKey(k[len(prefix):])
			if err != nil {
				return err
			}
			return readKeyedEntries(v, side, func(e *joinEntry) error {
				if e.count > 0 {
					n++
				}
				return nil
			})
		})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	op := open()
	evicted := 0
	const epochs = 40
	for epoch := uint64(1); epoch <= epochs+2; epoch++ {
		if epoch <= epochs {
			for side := range byte(2) {
				// One key of six per epoch, so that the others' buckets
				// are committed and may leave the cache; after the
				// restart, six new keys, so that only the restart's scan
				// tracks the rows stored before it.
				k := int64(epoch % 6)
				if epoch > epochs/2 {
					k += 6
				}
				c := &Chunk{}
				for i := range int64(3) {
					c.Append(types.Row{types.NewInt(k), types.NewInt(int64(epoch)*10 + i)}, Insert)
				}
				if err := op.port(side).Push(c); err != nil {
					t.Fatal(err)
				}
			}
		}
		// The watermarks trail the rows by five epochs, then pass them all.
		for side := range 2 {
			wm[side].valid.Store(true)
			wm[side].value.Store(int64(epoch)*10 - 50)
			if epoch > epochs {
				wm[side].value.Store(1 << 40)
			}
		}
		closeJoinEpoch(t, op, st, epoch)
		committed = epoch
		for side := range 2 {
			// The key this epoch wrote and those whose rows it freed
			// stay until the epoch commits; the final jump of the
			// watermarks reads every bucket back.
			if n := len(op.state[side]); n > 3 && epoch <= epochs {
				t.Fatalf("epoch %d: side %d caches %d keys", epoch, side, n)
			}
			for _, x := range op.cache.expire.sides[side].open {
				if x.e.evicted {
					evicted++
					if x.e.rowKey != "" {
						t.Fatalf("epoch %d: the expiry heap keeps an evicted row in memory", epoch)
					}
				}
			}
		}
		if epoch == epochs/2 {
			if n := stored(); n < 20 {
				t.Fatalf("epoch %d: Pebble holds %d rows; want the five epochs the watermarks trail (30)", epoch, n)
			}
			op = open()
		}
	}
	if n := stored(); n != 0 {
		t.Fatalf("Pebble holds %d rows after the watermarks passed every row", n)
	}
	if evicted == 0 {
		t.Fatal("no row was evicted before the watermark passed it")
	}
}
