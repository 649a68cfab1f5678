package exec

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/cockroachdb/pebble/v2"

	"streamdb/catalog"
	"streamdb/expr"
	"streamdb/plan"
	"streamdb/storage"
	"streamdb/types"
)

// TestAggGroupCache runs the same random inserts and retractions through an
// aggregate that keeps every group in memory and one that may keep only 4 (over 8 keys),
// with each epoch's batch committed one epoch late (as the runtime does when
// another view is slower), and checks that both emit the same view after
// every epoch and after a restart from Pebble. A third keeps the values of
// min and max in an extrema table (DataflowExtremaByValue), also with 4
// groups cached.
func TestAggGroupCache(t *testing.T) {
	seed := int64(11)
	rng := rand.New(rand.NewSource(seed))
	agg := &plan.Aggregate{
		GroupBy: []expr.Expr{&expr.ColRef{Idx: 0, Name: "k", T: types.Int8}},
		Aggs: []plan.AggCall{
			{Func: "count", T: types.Int8},
			{Func: "sum", Arg: &expr.ColRef{Idx: 1, Name: "v", T: types.Int8}, T: types.Numeric},
			{Func: "max", Arg: &expr.ColRef{Idx: 1, Name: "v", T: types.Int8}, T: types.Int8},
			{Func: "min", Arg: &expr.ColRef{Idx: 1, Name: "v", T: types.Int8}, T: types.Int8},
		},
		Cols: []types.Column{{Name: "k", Type: types.Int8}, {Name: "count", Type: types.Int8}, {Name: "sum", Type: types.Numeric}, {Name: "max", Type: types.Int8}, {Name: "min", Type: types.Int8}},
	}
	type side struct {
		store     *storage.Store
		op        *aggOp
		out       *multiset
		pending   []*pebbleBatch
		committed uint64
		limit     int64
		extrema   bool
	}
	open := func(s *side) {
		committed := func() uint64 { return s.committed }
		var ext *extremaTable
		if s.extrema {
			var err error
			if ext, err = newExtremaTable(s.store, storage.StatePrefix(1, 3), catalog.DefaultVNodes, committed); err != nil {
				t.Fatal(err)
			}
		}
		op, err := newAggOpWith(agg, false, catalog.DataflowLatest, storage.StatePrefix(1, 2), catalog.DefaultVNodes, s.store,
			groupLimit{max: func() int64 { return s.limit }, committed: committed}, ext, s.out)
		if err != nil {
			t.Fatal(err)
		}
		s.op = op
	}
	var sides []*side
	for i, limit := range []int64{0, 4, 4} {
		st := memoryStore(t)
		s := &side{store: st, out: &multiset{rows: map[string]int{}}, limit: limit, extrema: i == 2}
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
			// were applied; with the extrema table, one barrier later
			// still, so that its reads must see writes not committed.
			keep := 0
			if s.extrema {
				keep = 1
			}
			for len(s.pending) > keep {
				p := s.pending[0]
				if err := s.store.Commit(p.b, false); err != nil {
					t.Fatal(err)
				}
				s.committed = p.epoch
				p.b.Close()
				s.pending = s.pending[1:]
			}
			b := s.store.NewBatch()
			if err := s.op.Barrier(Epoch{ID: epoch, Batch: b}); err != nil {
				t.Fatal(err)
			}
			s.pending = append(s.pending, &pebbleBatch{b: b, epoch: epoch})
		}
		for _, s := range sides[1:] {
			if a, b := fmt.Sprint(sides[0].out.sorted()), fmt.Sprint(s.out.sorted()); a != b {
				t.Fatalf("seed %d epoch %d: cached aggregate (extrema table %v) differs\nall in memory: %s\nat most 4:     %s", seed, epoch, s.extrema, a, b)
			}
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
	for _, s := range sides[1:] {
		if a, b := fmt.Sprint(sides[0].out.sorted()), fmt.Sprint(s.out.sorted()); a != b {
			t.Fatalf("seed %d after restart: cached aggregate (extrema table %v) differs\nall in memory: %s\nat most 4:     %s", seed, s.extrema, a, b)
		}
	}
	if ext := sides[2].op.extrema; ext.reads == 0 {
		t.Error("the extrema table read nothing from Pebble")
	}
}

type pebbleBatch struct {
	b     *pebble.Batch
	epoch uint64
}
