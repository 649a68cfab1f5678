package exec

import (
	"math/rand"
	"sort"
	"testing"

	"streamdb/expr"
	"streamdb/plan"
	"streamdb/types"
)

// TestKeyedOrderUnderRetraction feeds random inserts and deletes of (key,
// value) rows, either possibly NULL, to array_agg(v ORDER BY k DESC NULLS
// LAST) and checks its result against the surviving rows sorted, also
// after a Marshal/Unmarshal round trip. A NULL argument (a row FILTER left
// out) changes nothing.
func TestKeyedOrderUnderRetraction(t *testing.T) {
	const seed = 11
	rng := rand.New(rand.NewSource(seed))
	fn := KeyedOrderName("array_agg", []KeyOrder{{Desc: true}}, types.Int8, "")
	if rt, err := AggResultType(fn, types.Bytea); err != nil || rt != types.ArrayOf(types.Int8) {
		t.Fatalf("result type of %s: %v, %v", fn, rt, err)
	}
	pack, err := expr.Call(expr.OrderedArgFunc, []expr.Expr{
		&expr.ColRef{Idx: 0, T: types.Int8}, &expr.ColRef{Idx: 1, T: types.Int8}})
	if err != nil {
		t.Fatal(err)
	}
	call := plan.AggCall{Func: fn, Arg: pack, T: types.ArrayOf(types.Int8)}
	maybeNull := func() types.Datum {
		if rng.Intn(5) == 0 {
			return types.Null
		}
		return types.NewInt(int64(rng.Intn(8)))
	}
	acc := NewAccumulator(call, false)
	var live []types.Row
	for step := 0; step < 1500; step++ {
		var row types.Row
		sign := int64(1)
		if len(live) > 0 && rng.Intn(3) == 0 {
			i := rng.Intn(len(live))
			row, sign = live[i], -1
			live = append(live[:i], live[i+1:]...)
		} else {
			row = types.Row{maybeNull(), maybeNull()}
			live = append(live, row)
		}
		v, err := pack.Eval(row)
		if err != nil {
			t.Fatal(err)
		}
		if err := acc.Add(v, sign); err != nil {
			t.Fatal(err)
		}
		if err := acc.Add(types.Null, 1); err != nil {
			t.Fatal(err)
		}
		if step%89 == 0 {
			restored := NewAccumulator(call, false)
			if _, err := restored.Unmarshal(acc.Marshal(nil)); err != nil {
				t.Fatal(err)
			}
			acc = restored
		}
		want := keyedOrderWant(live)
		if got := acc.Result(); types.Compare(got, want) != 0 {
			t.Fatalf("seed %d, step %d: got %v, want %v", seed, step, got, want)
		}
	}
}

// keyedOrderWant is array_agg(v ORDER BY k DESC NULLS LAST) over rows,
// ties in k ordered by v.
func keyedOrderWant(rows []types.Row) types.Datum {
	if len(rows) == 0 {
		return types.Null
	}
	sorted := append([]types.Row(nil), rows...)
	sort.SliceStable(sorted, func(i, j int) bool {
		a, b := sorted[i][0], sorted[j][0]
		if a.IsNull() != b.IsNull() {
			return b.IsNull()
		}
		if c := types.Compare(a, b); c != 0 {
			return c > 0
		}
		return types.Compare(sorted[i][1], sorted[j][1]) < 0
	})
	elems := make([]types.Datum, len(sorted))
	for i, r := range sorted {
		elems[i] = types.Null
		if !r[1].IsNull() {
			elems[i] = types.NewString(types.FormatText(r[1], types.Int8))
		}
	}
	return types.NewString(expr.FormatTextArray(elems))
}
