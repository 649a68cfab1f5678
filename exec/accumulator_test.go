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
