package exec

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2"

	"streamdb/catalog"
	"streamdb/expr"
	"streamdb/plan"
	"streamdb/storage"
	"streamdb/storage/keyenc"
	"streamdb/types"
)

// vnodeTestAgg is an aggregate over a retracting input grouped by a text
// and an interval (keyed by span: '1 day' and '24:00:00' are one group),
// with min and max in an extrema table.
func vnodeTestAgg() *plan.Aggregate {
	cols := []types.Column{{Name: "k", Type: types.Text}, {Name: "g", Type: types.Interval}, {Name: "v", Type: types.Int8}}
	v := &expr.ColRef{Idx: 2, Name: "v", T: types.Int8}
	return &plan.Aggregate{
		Input: &plan.Values{Cols: cols},
		GroupBy: []expr.Expr{&expr.ColRef{Idx: 0, Name: "k", T: types.Text},
			&expr.ColRef{Idx: 1, Name: "g", T: types.Interval}},
		Aggs: []plan.AggCall{
			{Func: "count", T: types.Int8},
			{Func: "sum", Arg: v, T: types.Numeric},
			{Func: "min", Arg: v, T: types.Int8},
			{Func: "max", Arg: v, T: types.Int8},
		},
		Cols: []types.Column{{Name: "k", Type: types.Text}, {Name: "g", Type: types.Interval}, {Name: "count", Type: types.Int8},
			{Name: "sum", Type: types.Numeric}, {Name: "min", Type: types.Int8}, {Name: "max", Type: types.Int8}},
	}
}

// vnodeTestAggOp opens aggregate agg of format dataflow on the tables
// firstOperatorIndex and the next of view id (as planTables numbers
// them), its keys carrying vnodes of vnodes, at most limit groups cached
// (0: all).
func vnodeTestAggOp(t *testing.T, st *storage.Store, agg *plan.Aggregate, dataflow catalog.FormatVersion, id uint32, vnodes int, limit int64, out Operator) *aggOp {
	t.Helper()
	committed := func() uint64 { return 1 << 62 } // each epoch commits before the next
	ext, err := newExtremaTable(st, storage.StatePrefix(id, firstOperatorIndex+1), vnodes, committed)
	if err != nil {
		t.Fatal(err)
	}
	ext.appendKey = keyAppender(dataflow)
	op, err := newAggOpWith(agg, false, dataflow, storage.StatePrefix(id, firstOperatorIndex), vnodes, st,
		groupLimit{max: func() int64 { return limit }, committed: committed}, ext, out)
	if err != nil {
		t.Fatal(err)
	}
	return op
}

// vnodeTestFeed pushes epochs random changes of groups (keys texts by 3
// intervals written two ways) through ops, each epoch committed.
func vnodeTestFeed(t *testing.T, st *storage.Store, rng *rand.Rand, live *[]types.Row, epoch *uint64, epochs, keys int, ops ...*aggOp) {
	t.Helper()
	ivs := []types.Datum{types.NewInterval(0, 1, 0), types.NewInterval(0, 0, 86400e6), types.NewInterval(1, 0, 0), types.NewInterval(0, 30, 0), types.NewInterval(0, 0, 5e6)}
	for range epochs {
		c := &Chunk{}
		for range 1 + rng.Intn(20) {
			if len(*live) > 0 && rng.Intn(3) == 0 {
				i := rng.Intn(len(*live))
				c.Append((*live)[i], Delete)
				*live = append((*live)[:i], (*live)[i+1:]...)
				continue
			}
			row := types.Row{types.NewString(fmt.Sprintf("key%d", rng.Intn(keys))), ivs[rng.Intn(len(ivs))], types.NewInt(int64(rng.Intn(100) - 50))}
			c.Append(row, Insert)
			*live = append(*live, row)
		}
		*epoch++
		for _, op := range ops {
			cp := &Chunk{Rows: append([]types.Row(nil), c.Rows...), Signs: append([]int8(nil), c.Signs...)}
			if err := op.Push(cp); err != nil {
				t.Fatal(err)
			}
			b := st.NewBatch()
			if err := op.Barrier(Epoch{ID: *epoch, Batch: b}); err != nil {
				t.Fatal(err)
			}
			if err := st.Commit(b, false); err != nil {
				t.Fatal(err)
			}
			b.Close()
		}
	}
}

// TestMigrateVNodeKeys: an aggregate's state of format
// DataflowIntervalSpans (no vnodes), moved by MigrateView to
// DataflowVNodeKeys, is byte for byte the state of a twin aggregate of
// that format fed the same input, in both its tables (groups, min/max
// values); an aggregate started on the migrated state (with a small
// cache, so groups are read back by key) goes on as its twin.
func TestMigrateVNodeKeys(t *testing.T) {
	const seed = 45
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	st := memoryStore(t)
	agg := vnodeTestAgg()
	oldOut, newOut := &textRows{cols: agg.Cols}, &textRows{cols: agg.Cols}
	old := vnodeTestAggOp(t, st, agg, catalog.DataflowIntervalSpans, 42, 0, 0, oldOut)
	twin := vnodeTestAggOp(t, st, agg, catalog.DataflowVNodeKeys, 43, catalog.DefaultVNodes, 0, newOut)
	var live []types.Row
	var epoch uint64
	vnodeTestFeed(t, st, rng, &live, &epoch, 150, 40, old, twin)

	d := &catalog.Descriptor{ID: 42, Name: "v", Kind: catalog.KindView, Dataflow: catalog.DataflowIntervalSpans}
	b := st.NewBatch()
	f, err := MigrateView(st, b, d, agg, nil)
	// The later steps change nothing else of the view's.
	if err != nil || f != catalog.DataflowLatest {
		t.Fatalf("MigrateView: format %d, %v; want %d", f, err, catalog.DataflowLatest)
	}
	if err := st.Commit(b, false); err != nil {
		t.Fatal(err)
	}
	for _, idx := range []uint16{firstOperatorIndex, firstOperatorIndex + 1} {
		got, want := stateEntries(t, st, storage.StatePrefix(42, idx)), stateEntries(t, st, storage.StatePrefix(43, idx))
		if want == "" {
			t.Fatalf("table %d of the twin is empty", idx)
		}
		if got != want {
			t.Fatalf("table %d: migrated state differs from the twin's:\n got %s\nwant %s", idx, got, want)
		}
	}

	oldOut.rows, newOut.rows = nil, nil
	migrated := vnodeTestAggOp(t, st, agg, catalog.DataflowVNodeKeys, 42, catalog.DefaultVNodes, 3, oldOut)
	vnodeTestFeed(t, st, rng, &live, &epoch, 100, 40, migrated, twin)
	if got, want := fmt.Sprint(oldOut.rows), fmt.Sprint(newOut.rows); got != want {
		t.Fatalf("the migrated aggregate emitted\n%s\nits twin\n%s", got, want)
	}
}

// TestVNodeSpanExport: the span storage.VNodeSpan gives for a range of
// vnodes of an aggregate's groups table, exported by a Pebble checkpoint
// restricted to it, holds exactly the groups whose vnode (of their group
// key) falls in the range; the spans of the ranges that cover all vnodes
// together hold every group once.
func TestVNodeSpanExport(t *testing.T) {
	const seed = 46
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	st, err := storage.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	agg := vnodeTestAgg()
	op := vnodeTestAggOp(t, st, agg, catalog.DataflowVNodeKeys, 43, catalog.DefaultVNodes, 0, &textRows{cols: agg.Cols})
	var live []types.Row
	var epoch uint64
	vnodeTestFeed(t, st, rng, &live, &epoch, 300, 2000, op)
	if err := st.Flush(); err != nil {
		t.Fatal(err)
	}

	// Every group key with its vnode, from the groups in memory.
	byVNode := map[uint16][]string{}
	for ks := range op.groups {
		vn := storage.VNodeOf(ks, catalog.DefaultVNodes)
		byVNode[vn] = append(byVNode[vn], ks)
	}
	if len(byVNode) < 64 {
		t.Fatalf("%d groups over only %d vnodes", len(op.groups), len(byVNode))
	}
	total := 0
	for _, r := range [][2]uint16{{0, 9}, {10, 99}, {100, 254}, {255, 255}} {
		start, end := storage.VNodeSpan(43, firstOperatorIndex, r[0], r[1])
		dir := t.TempDir() + "/export"
		if err := st.DB().Checkpoint(dir, pebble.WithFlushedWAL(), pebble.WithRestrictToSpans([]pebble.CheckpointSpan{{Start: start, End: end}})); err != nil {
			t.Fatal(err)
		}
		exp, err := storage.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]bool{}
		skip := len(storage.StatePrefix(43, firstOperatorIndex)) + storage.VNodeLen
		it, err := exp.DB().NewIter(&pebble.IterOptions{LowerBound: start, UpperBound: end})
		if err != nil {
			t.Fatal(err)
		}
		for valid := it.First(); valid; valid = it.Next() {
			ks := string(it.Key()[skip:])
			if _, _, err := keyenc.DecodeRow([]byte(ks), len(agg.GroupBy)); err != nil {
				t.Fatalf("vnodes %v: key %x holds no group key: %v", r, it.Key(), err)
			}
			got[ks] = true
		}
		if err := it.Close(); err != nil {
			t.Fatal(err)
		}
		exp.Close()
		want := 0
		for vn := int(r[0]); vn <= int(r[1]); vn++ {
			for _, ks := range byVNode[uint16(vn)] {
				want++
				if !got[ks] {
					t.Fatalf("vnodes %v: the export lacks group %x of vnode %d", r, ks, vn)
				}
			}
		}
		if len(got) != want {
			t.Fatalf("vnodes %v: the export holds %d groups, the range %d", r, len(got), want)
		}
		total += want
	}
	if total != len(op.groups) {
		t.Fatalf("the spans hold %d groups, the table %d", total, len(op.groups))
	}
}

// TestMigrateVNodeKeysTopN: a top-N's state of format
// DataflowIntervalSpans, moved by MigrateView to DataflowVNodeKeys, is
// byte for byte the state of a twin top-N of that format fed the same
// input; a top-N started on it (with and without its row cache) goes on
// emitting the top-N computed from scratch.
func TestMigrateVNodeKeysTopN(t *testing.T) {
	for ci, tn := range []*plan.TopN{
		testTopN("", true, false, 2, 1),
		testTopN(plan.RowNumber, true, true, 2, 0),
		testTopN("", false, true, 3, 0),
	} {
		for _, limit := range []int64{0, 2} {
			t.Run(fmt.Sprintf("%d_limit%d_cache%d", ci, tn.Count, limit), func(t *testing.T) {
				seed := int64(ci) + 50
				t.Logf("seed %d", seed)
				testMigrateVNodeKeysTopN(t, tn, seed, limit)
			})
		}
	}
}

func testMigrateVNodeKeysTopN(t *testing.T, tn *plan.TopN, seed, limit int64) {
	rng := rand.New(rand.NewSource(seed))
	store := memoryStore(t)
	oldPrefix, newPrefix := storage.StatePrefix(42, firstOperatorIndex), storage.StatePrefix(43, firstOperatorIndex)
	out := newCollector(t)
	oldOp, err := newTopNOp(tn, false, oldPrefix, store, topNConfig{dataflow: catalog.DataflowIntervalSpans}, out)
	if err != nil {
		t.Fatal(err)
	}
	twin, err := newTopNOp(tn, false, newPrefix, store, topNConfig{dataflow: catalog.DataflowVNodeKeys, vnodes: catalog.DefaultVNodes}, newCollector(t))
	if err != nil {
		t.Fatal(err)
	}
	var live []types.Row
	var committed uint64
	epochs := func(from, to uint64, ops ...*topNOp) {
		t.Helper()
		for epoch := from; epoch <= to; epoch++ {
			ch := &Chunk{}
			for range rng.Intn(8) {
				if len(live) > 0 && rng.Intn(3) == 0 {
					i := rng.Intn(len(live))
					ch.Append(live[i], Delete)
					live = append(live[:i], live[i+1:]...)
					continue
				}
				row := types.Row{types.NewInt(int64(rng.Intn(40))), types.NewInt(int64(rng.Intn(5))), types.NewInt(int64(rng.Intn(3)))}
				ch.Append(row, Insert)
				live = append(live, row)
			}
			for _, op := range ops {
				cp := &Chunk{Rows: append([]types.Row(nil), ch.Rows...), Signs: append([]int8(nil), ch.Signs...)}
				if err := op.Push(cp); err != nil {
					t.Fatal(err)
				}
				b := store.NewBatch()
				if err := op.Barrier(Epoch{ID: epoch, Batch: b}); err != nil {
					t.Fatal(err)
				}
				if err := store.Commit(b, false); err != nil {
					t.Fatal(err)
				}
			}
			committed = epoch
			if got, want := out.sorted(), referenceTopN(tn, live); strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Fatalf("epoch %d: top-N differs\ngot:\n%s\nwant:\n%s", epoch, strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		}
	}
	epochs(1, 150, oldOp, twin)

	d := &catalog.Descriptor{ID: 42, Name: "v", Kind: catalog.KindView, Dataflow: catalog.DataflowIntervalSpans}
	b := store.NewBatch()
	f, err := MigrateView(store, b, d, tn, nil)
	// The later steps change nothing else of the view's.
	if err != nil || f != catalog.DataflowLatest {
		t.Fatalf("MigrateView: format %d, %v; want %d", f, err, catalog.DataflowLatest)
	}
	if err := store.Commit(b, false); err != nil {
		t.Fatal(err)
	}
	got, want := stateEntries(t, store, oldPrefix), stateEntries(t, store, newPrefix)
	if want == "" || got != want {
		t.Fatalf("migrated state differs from the twin's:\n got %s\nwant %s", got, want)
	}

	cfg := topNConfig{dataflow: catalog.DataflowVNodeKeys, vnodes: catalog.DefaultVNodes,
		limit: groupLimit{max: func() int64 { return limit }, committed: func() uint64 { return committed }}}
	migrated, err := newTopNOp(tn, false, oldPrefix, store, cfg, out)
	if err != nil {
		t.Fatal(err)
	}
	if limit > 0 && tn.PartitionBy != nil && migrated.cache == nil {
		t.Fatal("the operator has no row cache")
	}
	epochs(151, 300, migrated)
}
