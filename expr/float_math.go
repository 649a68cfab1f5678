package expr

import (
	"math"
	"strconv"

	"github.com/cockroachdb/apd/v3"

	"streamdb/sqlerr"
	"streamdb/types"
)

// The double precision math functions as PostgreSQL computes them with
// glibc: the special cases of float.c, and results correctly rounded.
// Go's math package is up to an ulp away from glibc's correctly rounded
// exp, log and pow, so those are computed in decimal with guard digits
// and rounded once to the nearest float64.

// floatCtx carries enough digits for a correctly rounded float64 but at
// a tie closer than 10^-30.
var floatCtx = func() *apd.Context {
	c := apd.BaseContext.WithPrecision(40)
	c.MaxExponent, c.MinExponent = apd.MaxExponent, apd.MinExponent
	return c
}()

// nearestFloat rounds a decimal to the nearest float64.
func nearestFloat(d *apd.Decimal) float64 {
	f, err := strconv.ParseFloat(d.String(), 64)
	if err != nil && !math.IsInf(f, 0) {
		return 0
	}
	return f
}

// decOf is f in decimal to 40 significant digits (apd's SetFloat64 takes
// the shortest digits that read back as f, which are not f's value).
func decOf(f float64) *apd.Decimal {
	d, _, _ := apd.NewFromString(strconv.FormatFloat(f, 'e', 39, 64))
	return d
}

// checkFloatResult is PostgreSQL's check after a libm call: an infinite
// result overflowed and a zero one underflowed.
func checkFloatResult(r float64) (types.Datum, error) {
	if math.IsInf(r, 0) || r == 0 {
		return types.Null, floatRangeErr(r)
	}
	return types.NewFloat(r), nil
}

func floatExp(x float64) (types.Datum, error) {
	switch {
	case math.IsNaN(x):
		return types.NewFloat(x), nil
	case math.IsInf(x, 1):
		return types.NewFloat(x), nil
	case math.IsInf(x, -1):
		return types.NewFloat(0), nil
	case x > 710:
		return types.Null, floatRangeErr(math.Inf(1))
	case x < -746:
		return types.Null, floatRangeErr(0)
	}
	var r apd.Decimal
	floatCtx.Exp(&r, decOf(x))
	return checkFloatResult(nearestFloat(&r))
}

// floatLog is ln (base e) or log (base 10).
func floatLog(x float64, base10 bool) (types.Datum, error) {
	switch {
	case x == 0:
		return types.Null, sqlerr.New(sqlerr.InvalidArgumentForLogarithm, "cannot take logarithm of zero")
	case x < 0:
		return types.Null, sqlerr.New(sqlerr.InvalidArgumentForLogarithm, "cannot take logarithm of a negative number")
	case math.IsNaN(x) || math.IsInf(x, 1):
		return types.NewFloat(x), nil
	case x == 1:
		return types.NewFloat(0), nil
	}
	if base10 {
		return types.NewFloat(glibcLog10(x)), nil
	}
	return types.NewFloat(correctLn(x)), nil
}

// correctLn is ln(x) correctly rounded, as glibc's log is.
func correctLn(x float64) float64 {
	var r apd.Decimal
	floatCtx.Ln(&r, decOf(x))
	return nearestFloat(&r)
}

// glibcLog10 is glibc's log10 for finite x > 0, which is not correctly
// rounded: it scales x to [0.5, 2) by a power of two 2^k and returns
// k*log10(2) + log(x)/ln(10) in two parts (sysdeps/ieee754/dbl-64/e_log10.c).
// The float64 conversions keep Go from fusing the products.
func glibcLog10(x float64) float64 {
	const (
		ivln10    = 4.34294481903251816668e-01
		log10_2hi = 3.01029995663611771306e-01
		log10_2lo = 3.69423907715893078616e-13
	)
	frac, exp := math.Frexp(x) // x = frac * 2^exp, frac in [0.5, 1)
	k := exp - 1               // x = (2*frac) * 2^k, 2*frac in [1, 2)
	m := frac * 2
	if k < 0 {
		m, k = frac, k+1 // glibc keeps [0.5, 1) for negative k
	}
	y := float64(k)
	z := float64(y*log10_2lo) + float64(ivln10*correctLn(m))
	return z + float64(y*log10_2hi)
}

func floatSqrt(x float64) (types.Datum, error) {
	if x < 0 {
		return types.Null, sqlerr.New(sqlerr.InvalidArgumentForPowerFunction, "cannot take square root of a negative number")
	}
	return types.NewFloat(math.Sqrt(x)), nil
}

// floatPow is PostgreSQL's dpow.
func floatPow(x, y float64) (types.Datum, error) {
	// POSIX: NaN ^ 0 and 1 ^ NaN are 1; other NaN inputs give NaN.
	if math.IsNaN(x) {
		if math.IsNaN(y) || y != 0 {
			return types.NewFloat(cNaN), nil
		}
		return types.NewFloat(1), nil
	}
	if math.IsNaN(y) {
		if x != 1 {
			return types.NewFloat(cNaN), nil
		}
		return types.NewFloat(1), nil
	}
	if x == 0 && y < 0 {
		return types.Null, sqlerr.New(sqlerr.InvalidArgumentForPowerFunction, "zero raised to a negative power is undefined")
	}
	if x < 0 && math.Floor(y) != y {
		return types.Null, sqlerr.New(sqlerr.InvalidArgumentForPowerFunction, "a negative number raised to a non-integer power yields a complex result")
	}
	ax := math.Abs(x)
	switch {
	case math.IsInf(y, 0):
		switch {
		case ax == 1:
			return types.NewFloat(1), nil
		case (ax > 1) == (y > 0):
			return types.NewFloat(math.Inf(1)), nil
		}
		return types.NewFloat(0), nil
	case math.IsInf(x, 0):
		odd := math.Floor(y/2) != y/2
		switch {
		case y == 0:
			return types.NewFloat(1), nil
		case x > 0 && y > 0:
			return types.NewFloat(x), nil
		case x > 0:
			return types.NewFloat(0), nil
		case y > 0 && odd:
			return types.NewFloat(x), nil
		case y > 0:
			return types.NewFloat(-x), nil
		case odd:
			return types.NewFloat(math.Copysign(0, -1)), nil
		}
		return types.NewFloat(0), nil
	case x == 0 || y == 0 || x == 1:
		return types.NewFloat(math.Pow(x, y)), nil // exact
	}
	neg := x < 0 && math.Floor(y/2) != y/2
	// A first estimate decides overflow before the decimal computation.
	if est := y * math.Log10(ax); est > 310 {
		return types.Null, floatRangeErr(math.Inf(1))
	} else if est < -330 {
		return types.Null, floatRangeErr(0)
	}
	var r apd.Decimal
	floatCtx.Pow(&r, decOf(ax), decOf(y))
	f := nearestFloat(&r)
	if neg {
		f = -f
	}
	if math.IsInf(f, 0) || f == 0 {
		return types.Null, floatRangeErr(f)
	}
	return types.NewFloat(f), nil
}

// cNaN is C's NAN, the NaN PostgreSQL's functions return.
var cNaN = math.Float64frombits(0x7ff8000000000000)
