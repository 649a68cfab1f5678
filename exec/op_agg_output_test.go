package exec

import (
	"fmt"
	"testing"

	"github.com/cockroachdb/apd/v3"

	"streamdb/catalog"
	"streamdb/expr"
	"streamdb/plan"
	"streamdb/storage"
	"streamdb/types"
)

// TestAggOutputChanges: an aggregate emits a group's change (delete the
// row it emitted last, insert the new one) only when the value changes,
// not when it is the same number written differently (1.5, then 1.50),
// and it still does after a restart from Pebble.
func TestAggOutputChanges(t *testing.T) {
	st := memoryStore(t)
	agg := &plan.Aggregate{
		GroupBy: []expr.Expr{&expr.ColRef{Idx: 0, Name: "k", T: types.Int8}},
		Aggs:    []plan.AggCall{{Func: "sum", Arg: &expr.ColRef{Idx: 1, Name: "v", T: types.Numeric}, T: types.Numeric}},
		Cols:    []types.Column{{Name: "k", Type: types.Int8}, {Name: "sum", Type: types.Numeric}},
	}
	out := &textRows{cols: agg.Cols}
	open := func() *aggOp {
		op, err := newAggOp(agg, false, catalog.DataflowLatest, storage.StatePrefix(1, 2), st, groupLimit{max: func() int64 { return 0 }, committed: func() uint64 { return 0 }}, out)
		if err != nil {
			t.Fatal(err)
		}
		return op
	}
	num := func(s string) types.Datum {
		d, _, err := apd.NewFromString(s)
		if err != nil {
			t.Fatal(err)
		}
		return types.NewDecimal(d)
	}
	op := open()
	epoch := uint64(0)
	step := func(v string, want string) {
		t.Helper()
		c := &Chunk{}
		c.Append(types.Row{types.NewInt(1), num(v)}, Insert)
		if err := op.Push(c); err != nil {
			t.Fatal(err)
		}
		epoch++
		b := st.NewBatch()
		defer b.Close()
		if err := op.Barrier(Epoch{ID: epoch, Batch: b}); err != nil {
			t.Fatal(err)
		}
		if err := st.Commit(b, false); err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(out.rows); got != want {
			t.Fatalf("after adding %s: emitted %s, want %s", v, got, want)
		}
		out.rows = nil
	}
	step("1.5", "[+[1 1.5]]")
	step("0.00", "[]") // 1.50 equals 1.5
	step("1", "[-[1 1.5] +[1 2.50]]")
	op = open() // restart: the emitted row is restored
	step("0.5", "[-[1 2.50] +[1 3.00]]")
}
