package exec

import (
	"encoding/binary"
	"math"
	"math/big"
	"math/rand"
	"testing"

	"github.com/cockroachdb/apd/v3"

	"streamdb/catalog"
	"streamdb/expr"
	"streamdb/plan"
	"streamdb/sqlerr"
	"streamdb/storage/keyenc"
	"streamdb/types"
)

func sumCall(fn string, arg types.Type) plan.AggCall {
	t, err := AggResultType(fn, arg)
	if err != nil {
		panic(err)
	}
	return plan.AggCall{Func: fn, Arg: &expr.ColRef{Idx: 0, T: arg}, T: t}
}

func decimalDatum(s string) types.Datum {
	d, err := types.ParseText(s, types.Numeric)
	if err != nil {
		panic(err)
	}
	return d
}

// TestSumOverflowIsRowError: a value that would make a sum wrap or leave
// its type's range is refused with PostgreSQL's SQLSTATE and leaves the
// state as it was; the next values go on from there.
func TestSumOverflowIsRowError(t *testing.T) {
	cases := []struct {
		call      plan.AggCall
		vals      []types.Datum
		code      string
		wantAfter string
	}{
		{sumCall("sum", types.Float8), []types.Datum{types.NewFloat(1e308), types.NewFloat(1e308)}, "22003", "1e+308"},
		{sumCall("avg", types.Float8), []types.Datum{types.NewFloat(-1e308), types.NewFloat(-1e308)}, "22003", "-1e+308"},
		{sumCall("sum", types.Float4), []types.Datum{types.NewFloat(3e38), types.NewFloat(3e38)}, "22003", "3e+38"},
		{sumCall("sum", types.Interval), []types.Datum{types.NewInterval(2147483000, 0, 0), types.NewInterval(1000, 0, 0)}, "22008", "178956916 years 8 mons"},
		{sumCall("sum", types.Interval), []types.Datum{types.NewInterval(0, 0, math.MaxInt64-5), types.NewInterval(0, 0, 10)}, "22008", "2562047788:00:54.775802"},
		{sumCall("sum", types.Numeric), []types.Datum{decimalDatum("9e99999"), decimalDatum("9e99999")}, "22003", ""},
	}
	for _, c := range cases {
		acc := NewAccumulator(c.call, false)
		var err error
		for _, v := range c.vals {
			if err = acc.Add(v, 1); err != nil {
				break
			}
		}
		if sqlerr.Code(err) != c.code {
			t.Errorf("%s over %v: %v, want SQLSTATE %s", c.call, c.vals, err, c.code)
			continue
		}
		if c.wantAfter != "" {
			if got := types.FormatText(acc.Result(), c.call.T); got != c.wantAfter {
				t.Errorf("%s after the refused value: %s, want %s", c.call, got, c.wantAfter)
			}
		}
	}
	// sum(int4) is a bigint that never wraps.
	acc := NewAccumulator(sumCall("sum", types.Int4), false).(*sumAcc)
	acc.n, acc.i = 1, math.MaxInt64-3
	if err := acc.Add(types.NewInt(5), 1); sqlerr.Code(err) != "22003" || acc.i != math.MaxInt64-3 || acc.n != 1 {
		t.Errorf("sum(int4) past int64: %v, state %d/%d", err, acc.n, acc.i)
	}
	if err := acc.Add(types.NewInt(-5), -1); sqlerr.Code(err) != "22003" {
		t.Errorf("sum(int4) retracting past int64: %v", err)
	}
	if err := acc.Add(types.NewInt(3), 1); err != nil || acc.Result().I != math.MaxInt64 {
		t.Errorf("sum(int4) up to the bound: %v, %v", err, acc.Result())
	}
}

// TestSumExactAndSpecials: numeric sums keep every digit; NaN and the
// infinities are counted apart from the finite sum (new views), so that
// retracting them gives back the finite sum, as after a restart.
func TestSumExactAndSpecials(t *testing.T) {
	acc := NewAccumulator(sumCall("sum", types.Int8), false)
	for _, v := range []types.Datum{decimalDatum("1e30"), decimalDatum("0.000000000001"), decimalDatum("-3")} {
		if err := acc.Add(v, 1); err != nil {
			t.Fatal(err)
		}
	}
	if got := types.FormatText(acc.Result(), types.Numeric); got != "999999999999999999999999999997.000000000001" {
		t.Errorf("exact numeric sum: %s", got)
	}
	type step struct {
		v    string
		sign int64
		want string // sum, then avg
	}
	steps := []step{
		{"5", 1, "5"}, {"Infinity", 1, "Infinity"}, {"1", 1, "Infinity"}, {"-Infinity", 1, "NaN"},
		{"Infinity", -1, "-Infinity"}, {"-Infinity", -1, "6"}, {"NaN", 1, "NaN"}, {"NaN", -1, "6"},
	}
	for _, fn := range []string{"sum", "avg"} {
		for _, arg := range []types.Type{types.Numeric, types.Float8} {
			call := sumCall(fn, arg)
			acc := NewAccumulator(call, false)
			for i, s := range steps {
				var v types.Datum
				if arg == types.Numeric {
					v = decimalDatum(s.v)
				} else {
					f, _ := types.ParseText(s.v, types.Float8)
					v = f
				}
				if err := acc.Add(v, s.sign); err != nil {
					t.Fatalf("%s step %d: %v", call, i, err)
				}
				restored := NewAccumulator(call, false)
				if _, err := restored.Unmarshal(acc.Marshal(nil)); err != nil {
					t.Fatal(err)
				}
				acc = restored
				want := s.want
				if fn == "avg" && want == "6" { // over 5 and 1
					want = map[types.Type]string{types.Numeric: "3.0000000000000000", types.Float8: "3"}[arg]
				}
				if fn == "avg" && want == "5" && arg == types.Numeric {
					want = "5.0000000000000000"
				}
				if got := types.FormatText(acc.Result(), call.T); got != want {
					t.Errorf("%s after step %d (%s %+d): %s, want %s", call, i, s.v, s.sign, got, want)
				}
			}
		}
	}
}

// TestSumOldLayoutState: views created before DataflowSumSpecials keep
// their sum state as it was (count, then the sum), read and written
// alike; Infinity - Infinity is NaN there, as in PostgreSQL, not an error
// that stops the view.
func TestSumOldLayoutState(t *testing.T) {
	call := sumCall("sum", types.Numeric)
	old := binary.AppendVarint(nil, 2)
	old = keyenc.AppendValue(old, decimalDatum("7.5"))
	acc := newAccumulator(call, false, catalog.DataflowJoinStatePaged)
	rest, err := acc.Unmarshal(old)
	if err != nil || len(rest) != 0 || types.FormatText(acc.Result(), types.Numeric) != "7.5" {
		t.Fatalf("old state: %v, rest %d, %v", err, len(rest), acc.Result())
	}
	if got := acc.Marshal(nil); string(got) != string(old) {
		t.Errorf("old layout re-encodes as %x, was %x", got, old)
	}
	for _, v := range []string{"Infinity", "-Infinity"} {
		if err := acc.Add(decimalDatum(v), 1); err != nil {
			t.Fatalf("adding %s: %v", v, err)
		}
	}
	if got := types.FormatText(acc.Result(), types.Numeric); got != "NaN" {
		t.Errorf("Infinity + -Infinity = %s, want NaN", got)
	}
	avg := newAccumulator(sumCall("avg", types.Int4), false, catalog.DataflowJoinStatePaged)
	if err := avg.Add(types.NewInt(3), 1); err != nil || types.FormatText(avg.Result(), types.Numeric) != "3.0000000000000000" {
		t.Errorf("old-layout avg: %v %v", err, avg.Result())
	}
}

// TestSumBigintPastInt64: sum and avg over bigint are numeric, kept as an
// int64 part beside a decimal one; inserts and deletes of values near the
// int64 limits, with decimal inputs between them and Marshal/Unmarshal
// round trips at random steps, must give the exact sum a big.Int
// recomputation gives.
func TestSumBigintPastInt64(t *testing.T) {
	const seed = 11
	rng := rand.New(rand.NewSource(seed))
	edge := []int64{math.MaxInt64, math.MinInt64, math.MaxInt64 - 1, math.MinInt64 + 1, 1, -1, 0}
	for _, fn := range []string{"sum", "avg"} {
		call := sumCall(fn, types.Int8)
		acc := NewAccumulator(call, false)
		var live []int64
		var decimals int64 // decimal inputs of 1 (Datum.K decimal) still counted
		for step := 0; step < 3000; step++ {
			switch r := rng.Intn(10); {
			case r < 3 && len(live) > 0:
				i := rng.Intn(len(live))
				v := live[i]
				live = append(live[:i], live[i+1:]...)
				if err := acc.Add(types.NewInt(v), -1); err != nil {
					t.Fatal(err)
				}
			case r == 3:
				decimals++
				if err := acc.Add(decimalDatum("1"), 1); err != nil {
					t.Fatal(err)
				}
			default:
				v := edge[rng.Intn(len(edge))]
				if rng.Intn(2) == 0 {
					v = rng.Int63() - rng.Int63()
				}
				live = append(live, v)
				if err := acc.Add(types.NewInt(v), 1); err != nil {
					t.Fatal(err)
				}
			}
			if rng.Intn(50) == 0 {
				restored := NewAccumulator(call, false)
				if _, err := restored.Unmarshal(acc.Marshal(nil)); err != nil {
					t.Fatal(err)
				}
				acc = restored
			}
			sum := big.NewInt(decimals)
			for _, v := range live {
				sum.Add(sum, big.NewInt(v))
			}
			n := int64(len(live)) + decimals
			want := "NULL"
			switch {
			case n > 0 && fn == "sum":
				want = sum.String()
			case n > 0:
				want = types.FormatText(expr.DivDecimal(apd.NewWithBigInt(new(apd.BigInt).SetMathBigInt(sum), 0), apd.New(n, 0)), types.Numeric)
			}
			got := "NULL"
			if res := acc.Result(); !res.IsNull() {
				got = types.FormatText(res, types.Numeric)
			}
			if got != want {
				t.Fatalf("%s (seed %d, step %d): got %s, want %s", call, seed, step, got, want)
			}
		}
	}
}
