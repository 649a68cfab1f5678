package expr

import (
	"github.com/cockroachdb/apd/v3"

	"streamdb/types"
)

// exactCtx adds, subtracts and multiplies numerics exactly, as PostgreSQL
// does: precision 0 turns apd's rounding off for those operations.
var exactCtx = apd.Context{
	MaxExponent: apd.MaxExponent,
	MinExponent: apd.MinExponent,
	Traps:       apd.DefaultTraps,
}

// specialDecimalOp applies PostgreSQL's rules for NaN and the infinities to
// a numeric operator; ok is false when both operands are finite. Division
// or modulo by zero is left to the caller, which raises 22012 (except for
// NaN, which wins).
func specialDecimalOp(op string, a, b *apd.Decimal) (d types.Datum, ok bool) {
	if a.Form == apd.Finite && b.Form == apd.Finite {
		return types.Null, false
	}
	nan := types.NewDecimal(&apd.Decimal{Form: apd.NaN})
	if a.Form == apd.NaN || b.Form == apd.NaN {
		return nan, true
	}
	inf := func(neg bool) types.Datum {
		return types.NewDecimal(&apd.Decimal{Form: apd.Infinite, Negative: neg})
	}
	sign := func(x *apd.Decimal) int { return x.Sign() } // -1, 0, 1; infinities keep theirs
	switch op {
	case "+", "-":
		bneg := b.Negative
		if op == "-" {
			bneg = !bneg
		}
		switch {
		case a.Form == apd.Infinite && b.Form == apd.Infinite:
			if a.Negative != bneg {
				return nan, true
			}
			return inf(a.Negative), true
		case a.Form == apd.Infinite:
			return inf(a.Negative), true
		}
		return inf(bneg), true
	case "*":
		if sign(a) == 0 || sign(b) == 0 {
			return nan, true
		}
		return inf(a.Negative != b.Negative), true
	case "/":
		if b.Form == apd.Finite && b.IsZero() {
			return types.Null, false // division by zero
		}
		switch {
		case a.Form == apd.Infinite && b.Form == apd.Infinite:
			return nan, true
		case a.Form == apd.Infinite:
			return inf(a.Negative != b.Negative), true
		}
		return types.NewDecimal(apd.New(0, 0)), true
	case "%":
		if b.Form == apd.Finite && b.IsZero() {
			return types.Null, false
		}
		if a.Form == apd.Infinite {
			return nan, true
		}
		return types.NewDecimal(a), true // finite % infinity is the dividend
	}
	return nan, true
}
