package exec

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/cockroachdb/pebble/v2"

	"streamdb/expr"
	"streamdb/plan"
	"streamdb/storage"
	"streamdb/types"
)

// TestAggGroupCache runs the same random inserts and retractions through an
// aggregate that keeps every group in memory and one that may keep only 4 (over 8 keys),
// with each epoch's batch committed one epoch late (as the runtime does when
// another view is slower), and checks that both emit the same view after
// every epoch and after a restart from Pebble.
func TestAggGroupCache(t *testing.T) {
	seed := int64(11)
	rng := rand.New(rand.NewSource(seed))
	agg := &plan.Aggregate{
		GroupBy: []expr.Expr{&expr.ColRef{Idx: 0, Name: "k", T: types.Int8}},
		Aggs: []plan.AggCall{
			{Func: "count", T: types.Int8},
			{Func: "sum", Arg: &expr.ColRef{Idx: 1, Name: "v", T: types.Int8}, T: types.Numeric},
			{Func: "max", Arg: &expr.ColRef{Idx: 1, Name: "v", T: types.Int8}, T: types.Int8},
		},
		Cols: []types.Column{{Name: "k", Type: types.Int8}, {Name: "count", Type: types.Int8}, {Name: "sum", Type: types.Numeric}, {Name: "max", Type: types.Int8}},
	}
	type side struct {
		store     *storage.Store
		op        *aggOp
		out       *multiset
		pending   []*pebbleBatch
		committed uint64
		limit     int64
	}
	open := func(s *side) {
		op, err := newAggOp(agg, false, storage.DataflowLatest, storage.StatePrefix(1, 2), s.store,
			groupLimit{max: func() int64 { return s.limit }, committed: func() uint64 { return s.committed }}, s.out)
		if err != nil {
			t.Fatal(err)
		}
		s.op = op
	}
	var sides []*side
	for _, limit := range []int64{0, 4} {
		st := memoryStore(t)
		s := &side{store: st, out: &multiset{rows: map[string]int{}}, limit: limit}
		open(s)
		sides = append(sides, s)
	}
	var live []types.Row
	for epoch := uint64(1); epoch <= 200; epoch++ {
		c := &Chunk{}
		for range rng.Intn(12) {
			if len(live) > 0 && rng.Intn(2) == 0 {
				i := rng.Intn(len(live))
				c.Append(live[i], Delete)
				live = append(live[:i], live[i+1:]...)
				continue
			}
			r := types.Row{types.NewInt(int64(rng.Intn(8))), types.NewInt(int64(rng.Intn(100)))}
			c.Append(r, Insert)
			live = append(live, r)
		}
		for _, s := range sides {
			if c.Len() > 0 {
				cp := &Chunk{Rows: append([]types.Row(nil), c.Rows...), Signs: append([]int8(nil), c.Signs...)}
				if err := s.op.Push(cp); err != nil {
					t.Fatal(err)
				}
			}
			// The previous epoch commits only now, after this epoch's rows
			// were applied.
			for _, p := range s.pending {
				if err := s.store.Commit(p.b, false); err != nil {
					t.Fatal(err)
				}
				s.committed = p.epoch
				p.b.Close()
			}
			s.pending = nil
			b := s.store.NewBatch()
			if err := s.op.Barrier(Epoch{ID: epoch, Batch: b}); err != nil {
				t.Fatal(err)
			}
			s.pending = append(s.pending, &pebbleBatch{b: b, epoch: epoch})
		}
		if a, b := fmt.Sprint(sides[0].out.sorted()), fmt.Sprint(sides[1].out.sorted()); a != b {
			t.Fatalf("seed %d epoch %d: cached aggregate differs\nall in memory: %s\nat most 4:     %s", seed, epoch, a, b)
		}
		if n := len(sides[1].op.groups); n > 4+12 {
			t.Fatalf("seed %d epoch %d: %d groups cached with a limit of 4", seed, epoch, n)
		}
	}
	// Restart both from Pebble: commit what is pending, reopen, and check
	// that the next changes match again.
	for _, s := range sides {
		for _, p := range s.pending {
			if err := s.store.Commit(p.b, false); err != nil {
				t.Fatal(err)
			}
			p.b.Close()
		}
		s.pending = nil
		open(s)
		c := &Chunk{}
		for k := range 15 {
			c.Append(types.Row{types.NewInt(int64(k)), types.NewInt(1000)}, Insert)
		}
		if err := s.op.Push(c); err != nil {
			t.Fatal(err)
		}
		b := s.store.NewBatch()
		if err := s.op.Barrier(Epoch{ID: 1000, Batch: b}); err != nil {
			t.Fatal(err)
		}
		b.Close()
	}
	if a, b := fmt.Sprint(sides[0].out.sorted()), fmt.Sprint(sides[1].out.sorted()); a != b {
		t.Fatalf("seed %d after restart: cached aggregate differs\nall in memory: %s\nat most 4:     %s", seed, a, b)
	}
}

type pebbleBatch struct {
	b     *pebble.Batch
	epoch uint64
}
