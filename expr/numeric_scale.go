package expr

import (
	"math/big"

	"github.com/cockroachdb/apd/v3"

	"streamdb/types"
)

// numericScaleFunc builds scale, min_scale and trim_scale of a numeric
// (integer arguments cast to numeric, as PostgreSQL's implicit cast
// does); ok is false for other names.
//
// A numeric's scale is its count of digits after the point as written
// or computed (1.230 has 3), never negative: a decimal with a positive
// exponent is an integer of scale 0.
func numericScaleFunc(name string, args []Expr) (e Expr, ok bool, err error) {
	var t types.Type
	var fn func(d *apd.Decimal) types.Datum
	switch name {
	case "scale":
		t, fn = types.Int4, func(d *apd.Decimal) types.Datum {
			if d.Form != apd.Finite {
				return types.Null
			}
			return types.NewInt(int64(max(-d.Exponent, 0)))
		}
	case "min_scale":
		t, fn = types.Int4, func(d *apd.Decimal) types.Datum {
			if d.Form != apd.Finite {
				return types.Null
			}
			return types.NewInt(int64(minScale(d)))
		}
	case "trim_scale":
		t, fn = types.Numeric, func(d *apd.Decimal) types.Datum {
			if d.Form != apd.Finite {
				return types.NewDecimal(d)
			}
			return types.NewDecimal(withScale(d, minScale(d)))
		}
	default:
		return nil, false, nil
	}
	if len(args) != 1 {
		return nil, true, wrongArgs(name, args)
	}
	if at := args[0].Type(); at != types.Numeric && at != types.Unknown && !at.IsInteger() {
		return nil, true, wrongArgs(name, args)
	}
	a, err := castArgs(args, types.Numeric)
	if err != nil {
		return nil, true, err
	}
	return &Func{Name: name, Args: a, T: t, Fn: strict(func(v []types.Datum) (types.Datum, error) {
		return fn(v[0].D), nil
	})}, true, nil
}

// minScale is the fewest digits after the point that hold finite d
// exactly: its scale less its trailing zeros.
func minScale(d *apd.Decimal) int32 {
	if d.IsZero() {
		return 0
	}
	var r apd.Decimal
	r.Reduce(d)
	return max(-r.Exponent, 0)
}

// withScale is finite d written with scale digits after the point, at
// most d's own: the digits dropped must be zeros (scale >= minScale(d)).
func withScale(d *apd.Decimal, scale int32) *apd.Decimal {
	if d.IsZero() {
		return decimalZero(scale)
	}
	r := new(apd.Decimal)
	r.Reduce(d)
	if shift := r.Exponent + scale; shift > 0 {
		// Put back the zeros down to the wanted exponent.
		var p big.Int
		p.Exp(big.NewInt(10), big.NewInt(int64(shift)), nil)
		r.Coeff.Mul(&r.Coeff, new(apd.BigInt).SetMathBigInt(&p))
		r.Exponent = -scale
	}
	return r
}
