package exec

import (
	"bytes"
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"streamdb/catalog"
	"streamdb/expr"
	"streamdb/plan"
	"streamdb/storage"
	"streamdb/types"
)

// TestMigrateTopNState: a top-N's state of format DataflowViewEdges, keyed
// by row, rewritten by rekeyTopN, is byte for byte the state an operator
// of DataflowTopNStateByKey fed the same input holds; an operator of the
// newest format before DataflowVNodeKeys (with and without its row
// cache) started on it goes on
// emitting the top-N computed from scratch; and state already re-keyed is
// not re-keyed again.
func TestMigrateTopNState(t *testing.T) {
	cases := []*plan.TopN{
		testTopN("", false, true, 3, 0),
		testTopN("", true, false, 2, 1),
		testTopN(plan.RowNumber, true, true, 2, 0),
		testTopN(plan.Rank, true, false, 2, 0),
	}
	for ci, tn := range cases {
		for _, limit := range []int64{0, 2} {
			t.Run(fmt.Sprintf("%d_%s_limit%d_cache%d", ci, tn.Func, tn.Count, limit), func(t *testing.T) {
				seed := int64(ci) + 1
				t.Logf("seed %d", seed)
				testMigrateTopN(t, tn, seed, limit)
			})
		}
	}
}

func testMigrateTopN(t *testing.T, tn *plan.TopN, seed, limit int64) {
	rng := rand.New(rand.NewSource(seed))
	store := memoryStore(t)
	oldPrefix, newPrefix := storage.StatePrefix(42, 2), storage.StatePrefix(43, 2)
	out := newCollector(t)
	oldOp, err := newTopNOp(tn, false, oldPrefix, store, topNConfig{dataflow: catalog.DataflowViewEdges}, out)
	if err != nil {
		t.Fatal(err)
	}
	twin, err := newTopNOp(tn, false, newPrefix, store, topNConfig{dataflow: catalog.DataflowTopNStateByKey}, newCollector(t))
	if err != nil {
		t.Fatal(err)
	}
	var live []types.Row
	var committed uint64
	epochs := func(from, to uint64, ops ...*topNOp) {
		t.Helper()
		for epoch := from; epoch <= to; epoch++ {
			type change struct {
				row  types.Row
				sign int8
			}
			var changes []change
			for range rng.Intn(6) {
				if len(live) > 0 && rng.Intn(3) == 0 {
					i := rng.Intn(len(live))
					changes = append(changes, change{live[i], Delete})
					live = append(live[:i], live[i+1:]...)
					continue
				}
				row := types.Row{types.NewInt(int64(rng.Intn(3))), types.NewInt(int64(rng.Intn(5))), types.NewInt(int64(rng.Intn(3)))}
				if rng.Intn(8) == 0 {
					row[1] = types.Null
				}
				changes = append(changes, change{row, Insert})
				live = append(live, row)
			}
			for _, op := range ops {
				ch := &Chunk{}
				for _, c := range changes {
					ch.Append(c.row, c.sign)
				}
				if err := op.Push(ch); err != nil {
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

	b := store.NewBatch()
	ok, err := rekeyTopN(store.DB(), b, tn, oldPrefix, catalog.DataflowLatest)
	if err != nil || !ok {
		t.Fatalf("rekeyTopN: ok %v, %v", ok, err)
	}
	if err := store.Commit(b, false); err != nil {
		t.Fatal(err)
	}
	if got, want := stateEntries(t, store, oldPrefix), stateEntries(t, store, newPrefix); got != want {
		t.Fatalf("re-keyed state differs from the state kept by key from the start:\n got %s\nwant %s", got, want)
	}

	// Re-keyed state is not of the row keyed layout: not rewritten again.
	b = store.NewBatch()
	if ok, err := rekeyTopN(store.DB(), b, tn, oldPrefix, catalog.DataflowLatest); err != nil || ok || b.Count() != 0 {
		t.Fatalf("rekeyTopN of re-keyed state: ok %v, %d writes, %v", ok, b.Count(), err)
	}
	b.Close()

	// The newest format whose keys carry no vnode: the step after it
	// re-keys them again (TestMigrateVNodeKeysTopN).
	cfg := topNConfig{dataflow: catalog.DataflowVNodeKeys - 1, limit: groupLimit{max: func() int64 { return limit }, committed: func() uint64 { return committed }}}
	newOp, err := newTopNOp(tn, false, oldPrefix, store, cfg, out)
	if err != nil {
		t.Fatal(err)
	}
	if limit > 0 && newOp.cache == nil {
		t.Fatal("the operator has no row cache")
	}
	epochs(151, 300, newOp)
}

// stateEntries lists the keys (after prefix) and values under prefix.
func stateEntries(t *testing.T, store *storage.Store, prefix []byte) string {
	t.Helper()
	var sb bytes.Buffer
	err := storage.ScanPrefix(store.DB(), prefix, func(k, v []byte) error {
		fmt.Fprintf(&sb, "%x=%x ", k[len(prefix):], v)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return sb.String()
}

// TestTopNTableIndex: the top-N's state table is known without building
// the dataflow when it is the dataflow's one top-N (planTables).
func TestTopNTableIndex(t *testing.T) {
	tn := testTopN("", false, true, 3, 0)
	cols := tn.Cols
	proj := &plan.Project{Input: tn, Exprs: []expr.Expr{&expr.ColRef{Idx: 1, Name: "k", T: types.Int8}}, Cols: cols[1:2]}
	two := &plan.Union{Inputs: []plan.Node{tn, testTopN("", true, false, 1, 0)}, Cols: cols}
	for _, c := range []struct {
		name string
		d    *catalog.Descriptor
		root plan.Node
		ok   bool
	}{
		{"top-N", &catalog.Descriptor{}, tn, true},
		{"under a projection", &catalog.Descriptor{}, proj, true},
		{"two top-Ns", &catalog.Descriptor{}, two, false},
		{"altered", &catalog.Descriptor{OpState: map[string][]uint16{"x": {2}}}, tn, false},
	} {
		got, idx, ok := topNTableIndex(c.d, c.root, nil)
		if ok != c.ok || ok && (got != tn || idx != firstOperatorIndex) {
			t.Errorf("%s: top-N %p at %d, ok %v; want %p at %d, ok %v", c.name, got, idx, ok, tn, firstOperatorIndex, c.ok)
		}
	}
}
