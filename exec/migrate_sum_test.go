package exec

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/cockroachdb/apd/v3"

	"streamdb/catalog"
	"streamdb/expr"
	"streamdb/plan"
	"streamdb/storage"
	"streamdb/types"
)

// TestMigrateSumState: an aggregate's state of format
// DataflowJoinStatePaged (sums without special counts), rewritten by
// respecialSums, is byte for byte the state an aggregate of
// DataflowSumSpecials fed the same input holds, and an aggregate of that
// format started on it goes on as its twin; a group whose sum is NaN is
// not rewritten. (A view's state is not rewritten twice: its descriptor
// records the new format in the batch that rewrites it.)
func TestMigrateSumState(t *testing.T) {
	agg := &plan.Aggregate{
		GroupBy: []expr.Expr{&expr.ColRef{Idx: 0, Name: "k", T: types.Int8}},
		Aggs: []plan.AggCall{
			{Func: "count", T: types.Int8},
			{Func: "sum", Arg: &expr.ColRef{Idx: 1, Name: "n", T: types.Numeric}, T: types.Numeric},
			{Func: "avg", Arg: &expr.ColRef{Idx: 2, Name: "f", T: types.Float8}, T: types.Float8},
			{Func: "sum", Arg: &expr.ColRef{Idx: 3, Name: "i", T: types.Int8}, T: types.Numeric},
			{Func: "max", Arg: &expr.ColRef{Idx: 3, Name: "i", T: types.Int8}, T: types.Int8},
		},
		Cols: []types.Column{{Name: "k", Type: types.Int8}, {Name: "count", Type: types.Int8}, {Name: "sum", Type: types.Numeric},
			{Name: "avg", Type: types.Float8}, {Name: "sum", Type: types.Numeric}, {Name: "max", Type: types.Int8}},
	}
	const seed = 7
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	st := memoryStore(t)
	oldPrefix, newPrefix := storage.StatePrefix(42, 2), storage.StatePrefix(43, 2)
	limit := groupLimit{max: func() int64 { return 0 }, committed: func() uint64 { return 0 }}
	oldOut, newOut := &textRows{cols: agg.Cols}, &textRows{cols: agg.Cols}
	open := func(f catalog.FormatVersion, prefix []byte, out *textRows) *aggOp {
		op, err := newAggOp(agg, false, f, prefix, st, limit, out)
		if err != nil {
			t.Fatal(err)
		}
		return op
	}
	oldOp, twin := open(catalog.DataflowJoinStatePaged, oldPrefix, oldOut), open(catalog.DataflowSumSpecials, newPrefix, newOut)
	var live []types.Row
	epoch := uint64(0)
	run := func(epochs int, nan bool, ops ...*aggOp) {
		t.Helper()
		for range epochs {
			var rows []types.Row
			var signs []int8
			for range 1 + rng.Intn(5) {
				if len(live) > 0 && rng.Intn(3) == 0 {
					i := rng.Intn(len(live))
					rows, signs = append(rows, live[i]), append(signs, Delete)
					live = append(live[:i], live[i+1:]...)
					continue
				}
				d, _, _ := apd.NewFromString(fmt.Sprintf("%d.%02d", rng.Intn(100), rng.Intn(100)))
				f := float64(rng.Intn(1000)) / 8
				if nan {
					f = math.NaN()
				}
				row := types.Row{types.NewInt(int64(rng.Intn(4))), types.NewDecimal(d), types.NewFloat(f), types.NewInt(int64(rng.Intn(50)))}
				rows, signs = append(rows, row), append(signs, Insert)
				live = append(live, row)
			}
			epoch++
			for _, op := range ops {
				c := &Chunk{}
				for i, r := range rows {
					c.Append(r, signs[i])
				}
				if err := op.Push(c); err != nil {
					t.Fatal(err)
				}
				b := st.NewBatch()
				if err := op.Barrier(Epoch{ID: epoch, Batch: b}); err != nil {
					t.Fatal(err)
				}
				if err := st.Commit(b, false); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	run(100, false, oldOp, twin)

	b := st.NewBatch()
	ok, err := respecialSums(st.DB(), b, agg, catalog.DataflowJoinStatePaged, oldPrefix)
	if err != nil || !ok {
		t.Fatalf("respecialSums: ok %v, %v", ok, err)
	}
	if err := st.Commit(b, false); err != nil {
		t.Fatal(err)
	}
	if got, want := stateEntries(t, st, oldPrefix), stateEntries(t, st, newPrefix); got != want {
		t.Fatalf("rewritten state differs from the state kept with special counts from the start:\n got %s\nwant %s", got, want)
	}

	// Started on the rewritten state, the aggregate and its twin emit the
	// same changes (a NaN input and its retraction included).
	oldOut.rows, newOut.rows = nil, nil
	migrated := open(catalog.DataflowSumSpecials, oldPrefix, oldOut)
	run(3, true, migrated, twin)
	run(50, false, migrated, twin)
	if got, want := fmt.Sprint(oldOut.rows), fmt.Sprint(newOut.rows); got != want {
		t.Fatalf("the migrated aggregate emitted\n%s\nits twin\n%s", got, want)
	}

	// A sum that is NaN cannot be split into the finite sum and counts.
	nanPrefix := storage.StatePrefix(44, 2)
	nanOp := open(catalog.DataflowJoinStatePaged, nanPrefix, &textRows{cols: agg.Cols})
	run(3, true, nanOp)
	b = st.NewBatch()
	defer b.Close()
	if ok, err := respecialSums(st.DB(), b, agg, catalog.DataflowJoinStatePaged, nanPrefix); err != nil || ok || b.Count() != 0 {
		t.Fatalf("respecialSums of a NaN sum: ok %v, %d writes, %v", ok, b.Count(), err)
	}
}
