package exec

import (
	"math/rand"
	"testing"

	"streamdb/expr"
	"streamdb/plan"
	"streamdb/types"
)

// TestAccumulatorsUnderRetraction feeds random inserts and deletes of a
// multiset of values to each retractable accumulator and checks its result
// against a recomputation over the surviving values, also after a
// Marshal/Unmarshal round trip (as after a restart).
func TestAccumulatorsUnderRetraction(t *testing.T) {
	const seed = 7
	rng := rand.New(rand.NewSource(seed))
	arg := &expr.ColRef{Idx: 0, T: types.Int8}
	calls := []plan.AggCall{
		{Func: "count", Arg: arg, T: types.Int8},
		{Func: "count", Arg: arg, Distinct: true, T: types.Int8},
		{Func: "sum", Arg: arg, T: types.Numeric},
		{Func: "min", Arg: arg, T: types.Int8},
		{Func: "max", Arg: arg, T: types.Int8},
	}
	for _, call := range calls {
		acc := NewAccumulator(call, false)
		var live []int64
		for step := 0; step < 2000; step++ {
			if len(live) > 0 && rng.Intn(3) == 0 {
				i := rng.Intn(len(live))
				v := live[i]
				live = append(live[:i], live[i+1:]...)
				if err := acc.Add(types.NewInt(v), -1); err != nil {
					t.Fatal(err)
				}
			} else {
				v := int64(rng.Intn(50) - 25)
				live = append(live, v)
				if err := acc.Add(types.NewInt(v), 1); err != nil {
					t.Fatal(err)
				}
			}
			if step%97 == 0 {
				restored := NewAccumulator(call, false)
				if _, err := restored.Unmarshal(acc.Marshal(nil)); err != nil {
					t.Fatal(err)
				}
				acc = restored
			}
			want := recompute(call, live)
			if got := acc.Result(); types.Compare(got, want) != 0 {
				t.Fatalf("%s (seed %d, step %d): got %v, want %v", call, seed, step, got, want)
			}
		}
	}
}

func recompute(call plan.AggCall, vals []int64) types.Datum {
	if len(vals) == 0 {
		if call.Func == "count" {
			return types.NewInt(0)
		}
		return types.Null
	}
	switch call.Func {
	case "count":
		if call.Distinct {
			seen := map[int64]bool{}
			for _, v := range vals {
				seen[v] = true
			}
			return types.NewInt(int64(len(seen)))
		}
		return types.NewInt(int64(len(vals)))
	case "sum":
		var s int64
		for _, v := range vals {
			s += v
		}
		return types.NewInt(s)
	}
	best := vals[0]
	for _, v := range vals {
		if (call.Func == "min" && v < best) || (call.Func == "max" && v > best) {
			best = v
		}
	}
	return types.NewInt(best)
}

// TestExtremeAfterEmptying: a max whose values were all retracted, and
// whose empty result was read, must still see new values; a retraction that
// arrives before its insertion must cancel it.
func TestExtremeAfterEmptying(t *testing.T) {
	for _, fn := range []string{"max", "min"} {
		call := plan.AggCall{Func: fn, Arg: &expr.ColRef{Idx: 0, T: types.Int8}, T: types.Int8}
		acc := NewAccumulator(call, false)
		mustAdd := func(v int64, sign int64) {
			if err := acc.Add(types.NewInt(v), sign); err != nil {
				t.Fatal(err)
			}
		}
		mustAdd(5, 1)
		mustAdd(5, -1)
		if r := acc.Result(); !r.IsNull() {
			t.Fatalf("%s of nothing = %v, want NULL", fn, r)
		}
		mustAdd(7, 1)
		if r := acc.Result(); r.IsNull() || r.I != 7 {
			t.Fatalf("%s after emptying = %v, want 7", fn, r)
		}
		mustAdd(9, -1) // retraction first
		mustAdd(9, 1)
		if r := acc.Result(); r.IsNull() || r.I != 7 {
			t.Fatalf("%s after -9 +9 = %v, want 7", fn, r)
		}
		dist := NewAccumulator(plan.AggCall{Func: "count", Arg: call.Arg, Distinct: true, T: types.Int8}, false)
		for _, s := range []int64{-1, 1, 1} {
			if err := dist.Add(types.NewInt(3), s); err != nil {
				t.Fatal(err)
			}
		}
		if r := dist.Result(); r.I != 1 {
			t.Fatalf("count(DISTINCT) after -3 +3 +3 = %v, want 1", r)
		}
	}
}
