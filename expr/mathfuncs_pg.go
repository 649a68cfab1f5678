package expr

import (
	"math"
	"math/big"
	"math/rand/v2"

	"github.com/cockroachdb/apd/v3"

	"streamdb/sqlerr"
	"streamdb/types"
)

// maxFactorial is the largest n whose factorial a numeric holds
// (PostgreSQL's numeric has at most 131072 digits before the point).
const maxFactorial = 32177

// moreMathFunc builds PostgreSQL's remaining math functions; ok is false
// for other names.
func moreMathFunc(name string, args []Expr) (e Expr, ok bool, err error) {
	n := len(args)
	float := func(arity int, fn func(v []types.Datum) (types.Datum, error)) (Expr, bool, error) {
		if n != arity {
			return nil, true, wrongArgs(name, args)
		}
		for _, a := range args {
			if t := a.Type(); t != types.Unknown && !t.IsNumeric() {
				return nil, true, wrongArgs(name, args)
			}
		}
		a, err := castArgs(args, types.Float8)
		if err != nil {
			return nil, true, err
		}
		return &Func{Name: name, Args: a, T: types.Float8, Fn: strict(fn)}, true, nil
	}
	switch name {
	case "pi":
		return float(0, func([]types.Datum) (types.Datum, error) { return types.NewFloat(math.Pi), nil })
	case "cbrt":
		return float(1, func(v []types.Datum) (types.Datum, error) { return types.NewFloat(math.Cbrt(v[0].F)), nil })
	case "degrees":
		return float(1, func(v []types.Datum) (types.Datum, error) { return types.NewFloat(v[0].F / (math.Pi / 180)), nil })
	case "radians":
		return float(1, func(v []types.Datum) (types.Datum, error) { return types.NewFloat(v[0].F * (math.Pi / 180)), nil })
	case "random":
		if n != 0 {
			return nil, true, wrongArgs(name, args)
		}
		return &Func{Name: name, T: types.Float8, Fn: func([]types.Datum) (types.Datum, error) {
			return types.NewFloat(rand.Float64()), nil
		}}, true, nil
	case "log10":
		if n != 1 {
			return nil, true, wrongArgs(name, args)
		}
		e, err := mathFunc("log", args)
		return e, true, err
	case "width_bucket":
		if n != 4 {
			return nil, true, wrongArgs(name, args)
		}
		for _, a := range args {
			if t := a.Type(); t != types.Unknown && !t.IsNumeric() {
				return nil, true, wrongArgs(name, args)
			}
		}
		a, err := castArgs(args, types.Float8, types.Float8, types.Float8, types.Int4)
		if err != nil {
			return nil, true, err
		}
		return &Func{Name: name, Args: a, T: types.Int4, Fn: strict(func(v []types.Datum) (types.Datum, error) {
			return widthBucket(v[0].F, v[1].F, v[2].F, v[3].I)
		})}, true, nil
	case "gcd", "lcm":
		if n != 2 {
			return nil, true, wrongArgs(name, args)
		}
		t := types.Int4
		for _, a := range args {
			switch at := a.Type(); {
			case at == types.Int8:
				t = types.Int8
			case at == types.Int2 || at == types.Int4 || at == types.Unknown:
			default:
				return nil, true, wrongArgs(name, args)
			}
		}
		a, err := castArgs(args, t)
		if err != nil {
			return nil, true, err
		}
		return &Func{Name: name, Args: a, T: t, Fn: strict(func(v []types.Datum) (types.Datum, error) {
			return gcdLcm(name == "lcm", v[0].I, v[1].I, t)
		})}, true, nil
	case "factorial":
		if n != 1 || !(args[0].Type().IsInteger() || args[0].Type() == types.Unknown) {
			return nil, true, wrongArgs(name, args)
		}
		a, err := castArgs(args, types.Int8)
		if err != nil {
			return nil, true, err
		}
		return &Func{Name: name, Args: a, T: types.Numeric, Fn: strict(func(v []types.Datum) (types.Datum, error) {
			k := v[0].I
			switch {
			case k < 0:
				return types.Null, sqlerr.New(sqlerr.NumericValueOutOfRange, "factorial of a negative number is undefined")
			case k > maxFactorial:
				return types.Null, sqlerr.New(sqlerr.NumericValueOutOfRange, "value overflows numeric format")
			}
			var f big.Int
			f.MulRange(1, max(k, 1))
			var d apd.Decimal
			d.Coeff.SetMathBigInt(&f)
			return types.NewDecimal(&d), nil
		})}, true, nil
	case "div":
		if n != 2 {
			return nil, true, wrongArgs(name, args)
		}
		for _, a := range args {
			if t := a.Type(); t != types.Unknown && !t.IsNumeric() {
				return nil, true, wrongArgs(name, args)
			}
		}
		a, err := castArgs(args, types.Numeric)
		if err != nil {
			return nil, true, err
		}
		return &Func{Name: name, Args: a, T: types.Numeric, Fn: strict(func(v []types.Datum) (types.Datum, error) {
			return numericDiv(v[0].D, v[1].D)
		})}, true, nil
	}
	return nil, false, nil
}

// widthBucket is width_bucket(operand, low, high, count) on float8, as
// PostgreSQL computes it.
func widthBucket(x, lo, hi float64, count int64) (types.Datum, error) {
	bad := func(msg string) (types.Datum, error) {
		return types.Null, sqlerr.New(sqlerr.InvalidArgumentForWidthBucket, "%s", msg)
	}
	switch {
	case count <= 0:
		return bad("count must be greater than zero")
	case math.IsNaN(x) || math.IsNaN(lo) || math.IsNaN(hi):
		return bad("operand, lower bound, and upper bound cannot be NaN")
	case math.IsInf(lo, 0) || math.IsInf(hi, 0):
		return bad("lower and upper bounds must be finite")
	case lo == hi:
		return bad("lower bound cannot equal upper bound")
	}
	c := float64(count)
	var r int64
	switch {
	case lo < hi && x < lo, lo > hi && x > lo:
		r = 0
	case lo < hi && x >= hi, lo > hi && x <= hi:
		if count == math.MaxInt32 {
			return types.Null, sqlerr.New(sqlerr.NumericValueOutOfRange, "integer out of range")
		}
		r = count + 1
	case lo < hi:
		r = min(int64(c*((x-lo)/(hi-lo))), count-1) + 1
	default:
		r = min(int64(c*((lo-x)/(lo-hi))), count-1) + 1
	}
	return types.NewInt(r), nil
}

// gcdLcm is gcd or lcm of two integers of type t; the result must fit t.
func gcdLcm(lcm bool, a, b int64, t types.Type) (types.Datum, error) {
	g := new(big.Int).GCD(nil, nil, new(big.Int).Abs(big.NewInt(a)), new(big.Int).Abs(big.NewInt(b)))
	r := g
	if lcm {
		if a == 0 || b == 0 {
			return types.NewInt(0), nil
		}
		r = new(big.Int).Mul(big.NewInt(a), big.NewInt(b))
		r.Abs(r).Quo(r, g)
	}
	if !r.IsInt64() {
		return types.Null, outOfRange(t)
	}
	if _, err := types.CheckIntRange(r.Int64(), t); err != nil {
		return types.Null, outOfRange(t)
	}
	return types.NewInt(r.Int64()), nil
}

// numericDiv is div(a, b): a / b truncated toward zero.
func numericDiv(a, b *apd.Decimal) (types.Datum, error) {
	if b.IsZero() && b.Form == apd.Finite {
		return types.Null, sqlerr.New(sqlerr.DivisionByZero, "division by zero")
	}
	if a.Form != apd.Finite || b.Form != apd.Finite {
		if a.Form == apd.NaN || b.Form == apd.NaN {
			return types.NewDecimal(&apd.Decimal{Form: apd.NaN}), nil
		}
	}
	var q apd.Decimal
	c := decCtx.WithPrecision(uint32(max(40, int64(a.NumDigits())+int64(a.Exponent)-int64(b.Exponent)+2)))
	if _, err := c.QuoInteger(&q, a, b); err != nil {
		return types.Null, err
	}
	return types.NewDecimal(NormalizeZero(&q)), nil
}
