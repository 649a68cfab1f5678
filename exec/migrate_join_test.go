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

// TestMigrateJoinRows: a full outer join's state of format
// DataflowAppendOnlyJoins (whole input rows), rewritten by narrowJoinRows,
// is byte for byte the state a join of the narrowed plan
// (DataflowNarrowRows) fed the same changes holds, rows that narrow to one
// merged; a join started on it then emits what its twin emits.
func TestMigrateJoinRows(t *testing.T) {
	wide := []types.Column{{Name: "k", Type: types.Int8}, {Name: "v", Type: types.Text}, {Name: "w", Type: types.Text}}
	j := &plan.Join{Kind: plan.FullJoin,
		LeftKeys:  []expr.Expr{&expr.ColRef{Idx: 0, T: types.Int8}},
		RightKeys: []expr.Expr{&expr.ColRef{Idx: 0, T: types.Int8}},
		Left:      &plan.Scan{Cols: wide}, Right: &plan.Scan{Cols: wide[:2]},
		Cols: append(append([]types.Column(nil), wide...), wide[:2]...)}
	// Above the join only the left key and the right value are read.
	root := &plan.Project{Input: j, Exprs: []expr.Expr{&expr.ColRef{Idx: 0, T: types.Int8}, &expr.ColRef{Idx: 4, T: types.Text}},
		Cols: []types.Column{wide[0], wide[1]}}
	pruned, narrowings := plan.PruneColumnsNarrowing(root)
	nj, ok := pruned.(*plan.Project).Input.(*plan.Join)
	n, found := narrowings[j]
	if !ok || !found {
		t.Fatalf("the pruned plan has no join or no narrowing of it: %s", plan.Explain(pruned))
	}
	if w := len(nj.Left.Schema()); w != 1 {
		t.Fatalf("the narrowed left input has %d columns, want 1 (k)", w)
	}

	const seed = 11
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	st := memoryStore(t)
	oldPrefix, newPrefix := storage.StatePrefix(42, 3), storage.StatePrefix(43, 3)
	oldOut, newOut := &multiset{rows: map[string]int{}}, &multiset{rows: map[string]int{}}
	open := func(j *plan.Join, prefix []byte, out Operator) *joinOp {
		op, err := newJoinOp(j, prefix, st.DB(), joinStateRowInKey, [2]bool{}, out)
		if err != nil {
			t.Fatal(err)
		}
		return op
	}
	oldOp, twin := open(j, oldPrefix, oldOut), open(nj, newPrefix, newOut)
	var live [2][]types.Row
	epoch := uint64(0)
	// run feeds random changes of wide rows to wideOps, narrowed to
	// narrowOps, closing an epoch after each few.
	run := func(epochs int, wideOps, narrowOps []*joinOp) {
		t.Helper()
		for range epochs {
			epoch++
			for range rng.Intn(6) {
				side := byte(rng.Intn(2))
				row, sign := types.Row(nil), int8(Insert)
				if l := len(live[side]); l > 0 && rng.Intn(3) == 0 {
					i := rng.Intn(l)
					row, sign = live[side][i], Delete
					live[side] = append(live[side][:i], live[side][i+1:]...)
				} else {
					row = types.Row{types.NewInt(int64(rng.Intn(4))), types.NewString(fmt.Sprintf("v%d", rng.Intn(3))),
						types.NewString(fmt.Sprintf("w%d", rng.Intn(3)))}[:len(wide)-int(side)]
					if rng.Intn(8) == 0 {
						row[0] = types.Null
					}
					live[side] = append(live[side], row)
				}
				for _, op := range wideOps {
					c := &Chunk{}
					c.Append(row, sign)
					if err := op.port(side).Push(c); err != nil {
						t.Fatal(err)
					}
				}
				for _, op := range narrowOps {
					c := &Chunk{}
					c.Append(narrowRow(row, n[side]), sign)
					if err := op.port(side).Push(c); err != nil {
						t.Fatal(err)
					}
				}
			}
			for _, op := range append(append([]*joinOp(nil), wideOps...), narrowOps...) {
				closeJoinEpoch(t, op, st, epoch)
			}
		}
	}
	run(150, []*joinOp{oldOp}, []*joinOp{twin})

	b := st.NewBatch()
	widths := [2]int{len(wide), 2}
	if ok, err := narrowJoinRows(st.DB(), b, widths, n, oldPrefix); err != nil || !ok {
		t.Fatalf("narrowJoinRows: ok %v, %v", ok, err)
	}
	if err := st.Commit(b, false); err != nil {
		t.Fatal(err)
	}
	b.Close()
	if got, want := stateEntries(t, st, oldPrefix), stateEntries(t, st, newPrefix); got != want {
		t.Fatalf("rewritten state differs from the narrowed join's:\n got %s\nwant %s", got, want)
	}

	// Started on the rewritten state, the join and its twin emit the same
	// changes.
	migratedOut, twinOut := netChanges{}, netChanges{}
	migrated := open(nj, oldPrefix, migratedOut)
	twin.next = twinOut
	for range 60 {
		run(1, nil, []*joinOp{migrated, twin})
		if got, want := fmt.Sprint(migratedOut), fmt.Sprint(twinOut); got != want {
			t.Fatalf("epoch %d: the migrated join emitted\n%s\nits twin\n%s", epoch, got, want)
		}
	}

	// An entry of another layout is left alone.
	bad := storage.StatePrefix(44, 3)
	if err := st.DB().Set(append(append([]byte(nil), bad...), 7, 1, 2), []byte{2, 0}, nil); err != nil {
		t.Fatal(err)
	}
	b = st.NewBatch()
	defer b.Close()
	if ok, err := narrowJoinRows(st.DB(), b, widths, n, bad); err != nil || ok || b.Count() != 0 {
		t.Fatalf("narrowJoinRows of a bad entry: ok %v, %d writes, %v", ok, b.Count(), err)
	}
}

// netChanges is an Operator that adds up the changes it gets by row, a
// row retracted before it was inserted included.
type netChanges map[string]int

func (m netChanges) Push(c *Chunk) error {
	for i, r := range c.Rows {
		k := fmt.Sprint(r)
		if m[k] += int(c.Signs[i]); m[k] == 0 {
			delete(m, k)
		}
	}
	return nil
}

func (netChanges) Barrier(Epoch) error { return nil }

// TestJoinTableIndex: the join's state table is known without building
// the dataflow when it is the dataflow's one join (planTables numbers
// the operators above it), not when the plan of a view the dataflow
// computes itself is not given.
func TestJoinTableIndex(t *testing.T) {
	j := joinOnK(plan.InnerJoin)
	for _, in := range []plan.Node{j.Left, j.Right} {
		in.(*plan.Scan).Object = &catalog.Descriptor{Name: "s", Kind: catalog.KindStream}
	}
	count := func(in plan.Node) plan.Node {
		return &plan.Aggregate{Input: in, Aggs: []plan.AggCall{{Func: "count", T: types.Int8}},
			Cols: []types.Column{{Name: "n", Type: types.Int8}}}
	}
	proj := &plan.Project{Input: j, Exprs: []expr.Expr{&expr.ColRef{Idx: 0, T: types.Int8}}, Cols: j.Cols[:1]}
	old := &catalog.Descriptor{Dataflow: catalog.DataflowAppendOnlyJoins}
	for _, c := range []struct {
		name string
		d    *catalog.Descriptor
		root plan.Node
		idx  uint16
		ok   bool
	}{
		{"join", old, j, firstOperatorIndex, true},
		{"under an aggregate", old, count(proj), firstOperatorIndex + 1, true},
		{"two joins", old, &plan.Union{Inputs: []plan.Node{proj, proj}, Cols: proj.Cols}, 0, false},
		{"under a union", old, &plan.Union{Inputs: []plan.Node{proj}, Cols: proj.Cols}, firstOperatorIndex, true},
		{"under a top-N", old, &plan.TopN{Input: proj, Order: []plan.SortKey{{Expr: proj.Exprs[0]}}, Count: 3, Cols: proj.Cols}, firstOperatorIndex + 1, true},
		{"over a view not given", old, &plan.Scan{Object: &catalog.Descriptor{ID: 3, Name: "v", Kind: catalog.KindView}, Cols: j.Cols}, 0, false},
		{"altered", &catalog.Descriptor{Dataflow: catalog.DataflowAppendOnlyJoins, OpState: map[string][]uint16{"x": {2}}}, j, 0, false},
	} {
		got, idx, ok := joinTableIndex(c.d, c.root, nil)
		if ok != c.ok || ok && (got != j || idx != c.idx) {
			t.Errorf("%s: join %p at %d, ok %v; want %p at %d, ok %v", c.name, got, idx, ok, j, c.idx, c.ok)
		}
	}
}

// TestMigrateJoinLayouts: a full outer join's state re-keyed by id
// (joinRowsByID) and then made a page per entry (joinEntriesAsPages)
// restores joins of those formats that emit, epoch by epoch, what twins
// of the formats fed the same changes from the start emit; with packed
// sides too, whose later rows share pages.
func TestMigrateJoinLayouts(t *testing.T) {
	for _, packed := range [][2]bool{{false, false}, {true, true}} {
		const seed = 23
		rng := rand.New(rand.NewSource(seed))
		st := memoryStore(t)
		j := joinOnK(plan.FullJoin)
		open := func(id uint32, format joinStateFormat, out Operator) *joinOp {
			op, err := newJoinOp(j, storage.StatePrefix(id, 2), st.DB(), format, packed, out)
			if err != nil {
				t.Fatalf("seed %d packed %v: restore format %d: %v", seed, packed, format, err)
			}
			return op
		}
		var live [2][]types.Row
		epoch := uint64(0)
		run := func(ops ...*joinOp) {
			epoch++
			for range rng.Intn(6) {
				side, c := randomJoinChange(rng, &live, 4)
				for _, op := range ops {
					d := &Chunk{}
					d.Append(c.Rows[0], c.Signs[0])
					if err := op.port(side).Push(d); err != nil {
						t.Fatal(err)
					}
				}
			}
			for _, op := range ops {
				closeJoinEpoch(t, op, st, epoch)
			}
		}
		old := open(1, joinStateRowInKey, discard{})
		byID, byPage := open(2, joinStateByID, discard{}), open(3, joinStateByPage, discard{})
		for range 120 {
			run(old, byID, byPage)
		}
		// compare runs epochs through migrated and its twin, each
		// emitting to a fresh record, and checks they agree.
		compare := func(step string, migrated func(Operator) *joinOp, twin *joinOp, others ...*joinOp) {
			t.Helper()
			got, want := netChanges{}, netChanges{}
			m := migrated(got)
			twin.next = want
			if g, w := joinContents(m), joinContents(twin); g != w {
				t.Fatalf("seed %d packed %v, %s: the migrated join restored\n%s\nits twin holds\n%s", seed, packed, step, g, w)
			}
			for range 40 {
				run(append([]*joinOp{m, twin}, others...)...)
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("seed %d packed %v, %s, epoch %d: the migrated join emitted\n%v\nits twin\n%v", seed, packed, step, epoch, got, want)
				}
			}
		}
		prefix := storage.StatePrefix(1, 2)
		rewrite := func(step string, fn func(b *pebble.Batch) (bool, error)) {
			t.Helper()
			b := st.DB().NewIndexedBatch()
			defer b.Close()
			if ok, err := fn(b); err != nil || !ok {
				t.Fatalf("%s: ok %v, %v", step, ok, err)
			}
			if err := st.Commit(b, false); err != nil {
				t.Fatal(err)
			}
		}
		rewrite("by id", func(b *pebble.Batch) (bool, error) { return joinRowsByID(b, b, [2]int{2, 2}, prefix) })
		compare("by id", func(out Operator) *joinOp { return open(1, joinStateByID, out) }, byID, byPage)
		rewrite("by page", func(b *pebble.Batch) (bool, error) { return joinEntriesAsPages(b, b, prefix) })
		compare("by page", func(out Operator) *joinOp { return open(1, joinStateByPage, out) }, byPage)
	}
}

// joinContents lists what a join holds in memory: per side, join key and
// row, the count (equal rows added up: a packed side keeps them apart) and
// the matches.
func joinContents(op *joinOp) string {
	type held struct{ count, matches int64 }
	all := map[string]held{}
	for side := range 2 {
		for k, b := range op.state[side] {
			for e := range b.all {
				id := fmt.Sprintf("%d|%x|%x", side, k, e.rowKey)
				all[id] = held{all[id].count + e.count, e.matches}
			}
		}
	}
	return fmt.Sprint(all)
}
