package exec

import (
	"fmt"
	"math/rand"
	"testing"
	"unsafe"

	"streamdb/expr"
	"streamdb/plan"
	"streamdb/storage"
	"streamdb/types"
)

// TestJoinStateRestore runs random changes through a full outer join, in
// each state format, restarts it from Pebble every 5 epochs, and checks after every epoch that its output equals
// a join computed from scratch over the rows alive on each side.
func TestJoinStateRestore(t *testing.T) {
	type variant struct {
		format joinStateFormat
		packed [2]bool
	}
	for _, v := range []variant{{joinStateRowInKey, [2]bool{}}, {joinStateByID, [2]bool{}},
		{joinStateByPage, [2]bool{true, true}}, {joinStateByPage, [2]bool{false, false}}} {
		format := v.format
		seed := int64(5)
		rng := rand.New(rand.NewSource(seed))
		st := memoryStore(t)
		j := joinOnK(plan.FullJoin)
		out := &multiset{rows: map[string]int{}}
		open := func() *joinOp {
			// Packed sides: retractions rewrite pages; unpacked: a page
			// per row.
			op, err := newJoinOp(j, storage.StatePrefix(1, 2), st.DB(), format, v.packed, out)
			if err != nil {
				t.Fatalf("format %d packed %v: restore: %v", format, v.packed, err)
			}
			return op
		}
		op := open()
		var live [2][]types.Row
		for epoch := uint64(1); epoch <= 120; epoch++ {
			for range rng.Intn(6) {
				side, c := randomJoinChange(rng, &live, 4)
				if err := op.port(side).Push(c); err != nil {
					t.Fatal(err)
				}
			}
			closeJoinEpoch(t, op, st, epoch)
			if want, got := fmt.Sprint(fullJoinOf(live[0], live[1])), fmt.Sprint(out.sorted()); want != got {
				t.Fatalf("seed %d format %d packed %v epoch %d:\nwant %s\ngot  %s", seed, format, v.packed, epoch, want, got)
			}
			if epoch%5 == 0 {
				op = open() // restart from what Pebble holds
			}
		}
	}
}

// joinOnK is a join of kind of two inputs (k BIGINT, v TEXT) on k.
func joinOnK(kind plan.JoinKind) *plan.Join {
	cols := []types.Column{{Name: "k", Type: types.Int8}, {Name: "v", Type: types.Text}}
	return &plan.Join{Kind: kind,
		LeftKeys:  []expr.Expr{&expr.ColRef{Idx: 0, T: types.Int8}},
		RightKeys: []expr.Expr{&expr.ColRef{Idx: 0, T: types.Int8}},
		Left:      &plan.Scan{Cols: cols}, Right: &plan.Scan{Cols: cols},
		Cols: append(append([]types.Column(nil), cols...), cols...)}
}

// fullJoinOf is the full outer join on column 0 (NULL matches nothing) of
// two multisets of rows, as sorted row texts.
func fullJoinOf(left, right []types.Row) []string {
	m := &multiset{rows: map[string]int{}}
	c := &Chunk{}
	matched := make([]bool, len(right))
	for _, l := range left {
		found := false
		for i, r := range right {
			if !l[0].IsNull() && !r[0].IsNull() && l[0].I == r[0].I {
				c.Append(concatRows(l, r), Insert)
				found, matched[i] = true, true
			}
		}
		if !found {
			c.Append(concatRows(l, nullRow(2)), Insert)
		}
	}
	for i, r := range right {
		if !matched[i] {
			c.Append(concatRows(nullRow(2), r), Insert)
		}
	}
	if err := m.Push(c); err != nil {
		panic(err)
	}
	return m.sorted()
}

// BenchmarkJoinInsert feeds an inner join rows of the shape of Nexmark
// q7's left input (bids keyed by price, mostly distinct keys, nothing on
// the other side yet), with a barrier every 64 chunks.
func BenchmarkJoinInsert(b *testing.B) {
	st := memoryStore(b)
	cols := []types.Column{{Name: "auction", Type: types.Int8}, {Name: "price", Type: types.Int8}, {Name: "bidder", Type: types.Int8}, {Name: "ts", Type: types.Timestamp}}
	j := &plan.Join{Kind: plan.InnerJoin,
		LeftKeys:  []expr.Expr{&expr.ColRef{Idx: 1, T: types.Int8}},
		RightKeys: []expr.Expr{&expr.ColRef{Idx: 1, T: types.Int8}},
		Left:      &plan.Scan{Cols: cols}, Right: &plan.Scan{Cols: cols},
		Cols: append(append([]types.Column(nil), cols...), cols...)}
	op, err := newJoinOp(j, storage.StatePrefix(1, 2), st.DB(), joinStateByPage, [2]bool{true, false}, discard{})
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewSource(1))
	c := &Chunk{}
	epoch := uint64(0)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c.Append(types.Row{types.NewInt(int64(rng.Intn(1000))), types.NewInt(rng.Int63n(1 << 30)), types.NewInt(int64(i)), types.NewInt(int64(i))}, Insert)
		if c.Len() < chunkRows {
			continue
		}
		if err := op.port(0).Push(c); err != nil {
			b.Fatal(err)
		}
		c = &Chunk{}
		if i/chunkRows%64 == 63 {
			epoch++
			closeJoinEpoch(b, op, st, epoch)
		}
	}
}

// closeJoinEpoch delivers epoch's barrier on both inputs of op and
// commits the state it writes.
func closeJoinEpoch(t testing.TB, op *joinOp, st *storage.Store, epoch uint64) {
	t.Helper()
	b := st.NewBatch()
	defer b.Close()
	for side := range byte(2) {
		if err := op.port(side).Barrier(Epoch{ID: epoch, Batch: b}); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Commit(b, false); err != nil {
		t.Fatal(err)
	}
}

// discard is an Operator that drops what it gets.
type discard struct{}

func (discard) Push(*Chunk) error   { return nil }
func (discard) Barrier(Epoch) error { return nil }

// TestJoinEntrySize guards the size of a join's per-row entry: a join of a
// stream keeps millions of them (Go's allocation size classes around it
// are 64, 80 and 96 bytes).
func TestJoinEntrySize(t *testing.T) {
	if n := unsafe.Sizeof(joinEntry{}); n > 80 {
		t.Fatalf("joinEntry is %d bytes, more than 80", n)
	}
}
