package expr

import (
	"math"

	"github.com/cockroachdb/apd/v3"

	"streamdb/sqlerr"
	"streamdb/types"
)

// The numeric variants of sqrt, exp, ln, log, power and sign, computed in
// decimal as PostgreSQL's numeric.c does: each picks PostgreSQL's result
// scale (about 16 significant digits, and at least the inputs' scales,
// within 0..1000), computes with guard digits, and rounds half away from
// zero to that scale. apd's functions are correctly rounded at the
// precision they are given, so the guard digits make the result PostgreSQL's
// except where the exact value lies within 10^-10 of a rounding tie.

// PostgreSQL's numeric limits for these functions.
const (
	minSigDigits    = 16   // NUMERIC_MIN_SIG_DIGITS
	maxDisplayScale = 1000 // NUMERIC_MAX_DISPLAY_SCALE
	maxResultScale  = 2000 // NUMERIC_MAX_RESULT_SCALE
	guardDigits     = 12
)

// numericMathResolves reports whether a call of a math function resolves to
// its numeric variant: some argument is numeric and none is a float
// (PostgreSQL casts integers to numeric implicitly, numeric to float8 too,
// but not float to numeric).
func numericMathResolves(args []Expr) bool {
	numeric := false
	for _, a := range args {
		switch t := a.Type(); {
		case t == types.Numeric:
			numeric = true
		case t == types.Unknown || t.IsInteger():
		default:
			return false
		}
	}
	return numeric
}

// numericMathFunc builds the numeric variant of name.
func numericMathFunc(name string, args []Expr) (Expr, error) {
	a, err := castArgs(args, types.Numeric)
	if err != nil {
		return nil, err
	}
	var fn func(v []types.Datum) (*apd.Decimal, error)
	switch {
	case name == "sqrt" && len(a) == 1:
		fn = func(v []types.Datum) (*apd.Decimal, error) { return numericSqrt(v[0].D) }
	case name == "exp" && len(a) == 1:
		fn = func(v []types.Datum) (*apd.Decimal, error) { return numericExp(v[0].D) }
	case name == "ln" && len(a) == 1:
		fn = func(v []types.Datum) (*apd.Decimal, error) { return numericLn(v[0].D) }
	case name == "log" && len(a) == 1:
		fn = func(v []types.Datum) (*apd.Decimal, error) { return numericLog(apd.New(10, 0), v[0].D) }
	case name == "log" && len(a) == 2:
		fn = func(v []types.Datum) (*apd.Decimal, error) { return numericLog(v[0].D, v[1].D) }
	case (name == "power" || name == "pow") && len(a) == 2:
		fn = func(v []types.Datum) (*apd.Decimal, error) { return numericPower(v[0].D, v[1].D) }
	case name == "sign" && len(a) == 1:
		fn = func(v []types.Datum) (*apd.Decimal, error) { return numericSign(v[0].D), nil }
	default:
		return nil, wrongArgs(name, args)
	}
	return &Func{Name: name, Args: a, T: types.Numeric, Fn: strict(func(v []types.Datum) (types.Datum, error) {
		d, err := fn(v)
		if err != nil {
			return types.Null, err
		}
		if err := types.CheckNumeric(d); err != nil {
			return types.Null, err
		}
		return types.NewDecimal(NormalizeZero(d)), nil
	})}, nil
}

var (
	decNaN    = &apd.Decimal{Form: apd.NaN}
	decPosInf = &apd.Decimal{Form: apd.Infinite}
	decNegInf = &apd.Decimal{Form: apd.Infinite, Negative: true}
)

func isNaN(d *apd.Decimal) bool { return d.Form == apd.NaN || d.Form == apd.NaNSignaling }

// clampScale bounds a result scale to 0..NUMERIC_MAX_DISPLAY_SCALE.
func clampScale(s int64) int32 { return int32(min(max(s, 0), maxDisplayScale)) }

// decimalZero is zero shown with scale digits after the point.
func decimalZero(scale int32) *apd.Decimal { return apd.New(0, -scale) }

// msd is the decimal exponent of d's most significant digit (d nonzero).
func msd(d *apd.Decimal) int64 { return int64(d.NumDigits()) + int64(d.Exponent) - 1 }

// toFloat converts d to float64, infinities for magnitudes past its range
// (numericvar_to_double_no_overflow).
func toFloat(d *apd.Decimal) float64 {
	f, err := d.Float64()
	if err != nil {
		if d.Negative {
			return math.Inf(-1)
		}
		return math.Inf(1)
	}
	return f
}

// roundTo rounds d half away from zero to scale digits after the point.
func roundTo(d *apd.Decimal, scale int32) (*apd.Decimal, error) {
	var r apd.Decimal
	c := exactCtx
	c.Precision = uint32(max(int64(1), msd(d)+int64(scale)+3))
	c.Rounding = apd.RoundHalfUp
	if _, err := c.Quantize(&r, stickyTail(d, scale), -scale); err != nil {
		return nil, types.ErrNumericOverflow()
	}
	return &r, nil
}

// workCtx has precision for a result whose most significant digit is near
// 10^mag, rounded to scale digits after the point, with guard digits.
func workCtx(mag int64, scale int32) *apd.Context {
	c := apd.BaseContext.WithPrecision(uint32(max(mag+1+int64(scale), 1) + guardDigits))
	c.MaxExponent = apd.MaxExponent
	c.MinExponent = apd.MinExponent
	return c
}

// isInteger reports whether the finite d has no fractional digits.
func isInteger(d *apd.Decimal) bool {
	if d.Exponent >= 0 || d.IsZero() {
		return true
	}
	var r apd.Decimal
	r.Reduce(d)
	return r.Exponent >= 0
}

func numericSign(d *apd.Decimal) *apd.Decimal {
	if isNaN(d) {
		return decNaN
	}
	return apd.New(int64(d.Sign()), 0)
}

func numericSqrt(x *apd.Decimal) (*apd.Decimal, error) {
	switch {
	case isNaN(x):
		return decNaN, nil
	case x.Sign() < 0:
		return nil, sqlerr.New(sqlerr.InvalidArgumentForPowerFunction, "cannot take square root of a negative number")
	case x.Form == apd.Infinite:
		return decPosInf, nil
	}
	// Scale: 16 significant digits by the base-10000 weight, at least the
	// input's scale.
	weight, _ := nbaseWeight(x)
	sweight := int64(weight+1)*4/2 - 1
	rscale := clampScale(max(minSigDigits-sweight, int64(dscale(x))))
	if x.IsZero() {
		return decimalZero(rscale), nil
	}
	var r apd.Decimal
	if _, err := workCtx(msd(x)/2+1, rscale).Sqrt(&r, x); err != nil {
		return nil, err
	}
	return roundTo(&r, rscale)
}

func numericExp(x *apd.Decimal) (*apd.Decimal, error) {
	switch {
	case isNaN(x):
		return decNaN, nil
	case x.Form == apd.Infinite && x.Negative:
		return apd.New(0, 0), nil
	case x.Form == apd.Infinite:
		return decPosInf, nil
	}
	val := toFloat(x) * 0.434294481903252 // decimal weight of the result
	val = min(max(val, -maxResultScale), maxResultScale)
	rscale := clampScale(max(minSigDigits-int64(val), int64(dscale(x))))
	return expScaled(x, rscale)
}

// expScaled is exp_var: e^x rounded to rscale, 22003 past numeric's range.
func expScaled(x *apd.Decimal, rscale int32) (*apd.Decimal, error) {
	f := toFloat(x)
	if math.Abs(f) >= maxResultScale*3 {
		if f > 0 {
			return nil, types.ErrNumericOverflow()
		}
		return decimalZero(rscale), nil
	}
	c := workCtx(int64(math.Ceil(f*0.434294481903252)), rscale)
	// apd's Exp answers exactly 1 for some x of |x| far below 1 whose
	// e^x the precision still tells from 1 (e^7e-500 at 1013 digits):
	// the series of expHalving sums them right.
	if c.Precision > apdExpMaxPrecision || !x.IsZero() && int64(x.NumDigits())+int64(x.Exponent) < -2 {
		r, err := expHalving(c, x)
		if err != nil {
			return nil, types.ErrNumericOverflow()
		}
		return roundTo(r, rscale)
	}
	var r apd.Decimal
	if _, err := c.Exp(&r, x); err != nil {
		return nil, types.ErrNumericOverflow()
	}
	return roundTo(&r, rscale)
}

// lnDweight is estimate_ln_dweight: the decimal weight of ln(x) for x > 0.
func lnDweight(x *apd.Decimal) int64 {
	if x.Sign() <= 0 {
		return 0
	}
	if x.Cmp(apd.New(9, -1)) >= 0 && x.Cmp(apd.New(11, -1)) <= 0 {
		var d apd.Decimal
		exactCtx.Sub(&d, x, apd.New(1, 0))
		if d.IsZero() {
			return 0
		}
		return msd(&d)
	}
	// PostgreSQL estimates from the first two base-10000 digits: x is
	// about digits * 10^dweight. (With a single digit it uses that digit
	// at its own weight, the same number.)
	weight, _ := nbaseWeight(x)
	dweight := int64(weight-1) * 4
	shifted := *x
	shifted.Exponent -= int32(dweight)
	var lead apd.Decimal
	c := apd.BaseContext.WithPrecision(40)
	c.Rounding = apd.RoundDown
	c.Quantize(&lead, &shifted, 0)
	digits, _ := lead.Int64()
	ln := math.Log(float64(digits)) + float64(dweight)*2.302585092994046
	return int64(math.Log10(math.Abs(ln)))
}

func numericLn(x *apd.Decimal) (*apd.Decimal, error) {
	switch {
	case isNaN(x):
		return decNaN, nil
	case x.Sign() < 0:
		return nil, sqlerr.New(sqlerr.InvalidArgumentForLogarithm, "cannot take logarithm of a negative number")
	case x.IsZero():
		return nil, sqlerr.New(sqlerr.InvalidArgumentForLogarithm, "cannot take logarithm of zero")
	case x.Form == apd.Infinite:
		return decPosInf, nil
	}
	dw := lnDweight(x)
	rscale := clampScale(max(minSigDigits-dw, int64(dscale(x))))
	var r apd.Decimal
	if _, err := workCtx(dw+1, rscale).Ln(&r, x); err != nil {
		return nil, err
	}
	return roundTo(&r, rscale)
}

func numericLog(base, x *apd.Decimal) (*apd.Decimal, error) {
	if isNaN(base) || isNaN(x) {
		return decNaN, nil
	}
	for _, d := range []*apd.Decimal{base, x} {
		if d.Sign() < 0 {
			return nil, sqlerr.New(sqlerr.InvalidArgumentForLogarithm, "cannot take logarithm of a negative number")
		}
		if d.IsZero() {
			return nil, sqlerr.New(sqlerr.InvalidArgumentForLogarithm, "cannot take logarithm of zero")
		}
	}
	switch {
	case base.Form == apd.Infinite && x.Form == apd.Infinite:
		return decNaN, nil
	case base.Form == apd.Infinite:
		return apd.New(0, 0), nil
	case x.Form == apd.Infinite:
		return decPosInf, nil
	}
	bw, xw := lnDweight(base), lnDweight(x)
	rw := xw - bw
	rscale := clampScale(max(minSigDigits-rw, int64(dscale(base)), int64(dscale(x))))
	var lb, lx, q apd.Decimal
	if _, err := workCtx(bw+1, rscale+int32(max(rw, 0))+guardDigits).Ln(&lb, base); err != nil {
		return nil, err
	}
	if lb.IsZero() {
		return nil, divByZero()
	}
	c := workCtx(xw+1, rscale+int32(max(-bw, 0))+guardDigits)
	if _, err := c.Ln(&lx, x); err != nil {
		return nil, err
	}
	if _, err := c.Quo(&q, &lx, &lb); err != nil {
		return nil, err
	}
	return roundTo(&q, rscale)
}

func numericPower(x, y *apd.Decimal) (*apd.Decimal, error) {
	one := apd.New(1, 0)
	negOne := apd.New(-1, 0)
	complexErr := func() error {
		return sqlerr.New(sqlerr.InvalidArgumentForPowerFunction, "a negative number raised to a non-integer power yields a complex result")
	}
	zeroNeg := func() error {
		return sqlerr.New(sqlerr.InvalidArgumentForPowerFunction, "zero raised to a negative power is undefined")
	}
	// POSIX pow(3): NaN ^ 0 and 1 ^ NaN are 1, other NaN inputs give NaN.
	if isNaN(x) {
		if y.Form == apd.Finite && y.IsZero() {
			return one, nil
		}
		return decNaN, nil
	}
	if isNaN(y) {
		if x.Form == apd.Finite && x.Cmp(one) == 0 {
			return one, nil
		}
		return decNaN, nil
	}
	if y.Form == apd.Infinite {
		if x.Form == apd.Finite {
			switch {
			case x.Cmp(one) == 0 || x.Cmp(negOne) == 0:
				return one, nil
			case x.IsZero() && y.Negative:
				return nil, zeroNeg()
			}
		}
		var ax apd.Decimal
		ax.Abs(x)
		if (x.Form == apd.Infinite || ax.Cmp(one) > 0) == !y.Negative {
			return decPosInf, nil
		}
		return apd.New(0, 0), nil
	}
	if x.Form == apd.Infinite {
		switch {
		case y.IsZero():
			return one, nil
		case !x.Negative && y.Negative:
			return apd.New(0, 0), nil
		case !x.Negative:
			return decPosInf, nil
		case !isInteger(y):
			return nil, complexErr()
		case y.Negative:
			return apd.New(0, 0), nil
		case isOdd(y):
			return decNegInf, nil
		}
		return decPosInf, nil
	}
	if x.IsZero() && y.Sign() < 0 {
		return nil, zeroNeg()
	}
	if isInteger(y) {
		if n, err := y.Int64(); err == nil && n >= math.MinInt32 && n <= math.MaxInt32 {
			return powerInt(x, n)
		}
	}
	return powerGeneral(x, y)
}

// isOdd reports whether the integer d is odd.
func isOdd(d *apd.Decimal) bool {
	var r apd.Decimal
	r.Reduce(d)
	if r.Exponent > 0 {
		return false
	}
	return r.Coeff.Bit(0) == 1
}

// powerInt is power_var_int: an integer exponent, scale max(16, x's).
func powerInt(x *apd.Decimal, n int64) (*apd.Decimal, error) {
	rscale := clampScale(max(minSigDigits, int64(dscale(x))))
	if n == 0 {
		return roundTo(apd.New(1, 0), rscale)
	}
	if x.IsZero() {
		return decimalZero(rscale), nil
	}
	var ax apd.Decimal
	ax.Abs(x)
	f := float64(n) * (float64(msd(&ax)) + leadLog10(&ax))
	if f > 3*math.MaxInt16*4 {
		return nil, types.ErrNumericOverflow()
	}
	if f+1 < -float64(rscale) {
		return decimalZero(rscale), nil
	}
	var r apd.Decimal
	if n > 0 && int64(x.NumDigits())*n <= exactPowerDigits {
		// Exact: apd's Pow refuses some results within numeric's range.
		var c apd.BigInt
		c.Exp(&x.Coeff, apd.NewBigInt(n), nil)
		exp := int64(x.Exponent) * n
		if drop := -int64(rscale) - exp; drop > 0 {
			// Round half up to rscale here: the exact exponent may lie
			// past what apd can hold.
			var p, half apd.BigInt
			p.Exp(apd.NewBigInt(10), apd.NewBigInt(drop), nil)
			half.Quo(&p, apd.NewBigInt(2))
			c.Add(&c, &half)
			c.Quo(&c, &p)
			exp = -int64(rscale)
		}
		r.Coeff.Set(&c)
		r.Exponent = int32(exp)
		r.Negative = x.Negative && n%2 == 1
		if err := types.CheckNumeric(&r); err != nil {
			return nil, err
		}
		return roundTo(&r, rscale)
	}
	if _, err := workCtx(int64(math.Ceil(f)), rscale).Pow(&r, x, apd.New(n, 0)); err != nil {
		return nil, types.ErrNumericOverflow()
	}
	return roundTo(&r, rscale)
}

// exactPowerDigits bounds the digits of an integer power computed exactly.
const exactPowerDigits = 1 << 20

// leadLog10 is log10 of x's leading digits scaled to [1, 10).
func leadLog10(ax *apd.Decimal) float64 {
	s := *ax
	s.Exponent -= int32(msd(ax))
	f, _ := s.Float64()
	return math.Log10(f)
}

// powerGeneral is power_var for a non-integer or huge exponent:
// exp(y * ln(x)).
func powerGeneral(x, y *apd.Decimal) (*apd.Decimal, error) {
	if x.IsZero() {
		return decimalZero(minSigDigits), nil
	}
	neg := false
	base := x
	if x.Negative {
		if !isInteger(y) {
			return nil, sqlerr.New(sqlerr.InvalidArgumentForPowerFunction, "a negative number raised to a non-integer power yields a complex result")
		}
		neg = isOdd(y)
		var ax apd.Decimal
		ax.Abs(x)
		base = &ax
	}
	// A first estimate of y*ln(x) decides overflow and the scale. It is
	// PostgreSQL's: ln(x) to about 8 significant digits and the product
	// rounded to as many decimals, so that a weight on a boundary
	// (1e100 ^ -2.5) truncates to the same scale.
	dw := lnDweight(base)
	lowScale := int32(max(8-dw, 0))
	var lnx, prod apd.Decimal
	low := apd.BaseContext.WithPrecision(40)
	low.MaxExponent, low.MinExponent = apd.MaxExponent, apd.MinExponent
	if _, err := low.Ln(&lnx, base); err != nil {
		return nil, err
	}
	lnLow, err := roundTo(&lnx, lowScale)
	if err != nil {
		return nil, err
	}
	if _, err := exactCtx.Mul(&prod, lnLow, y); err != nil {
		return nil, types.ErrNumericOverflow()
	}
	prodLow, err := roundTo(&prod, lowScale)
	if err != nil {
		return nil, err
	}
	val := toFloat(prodLow)
	if math.Abs(val) > maxResultScale*3.01 {
		if val > 0 {
			return nil, types.ErrNumericOverflow()
		}
		return decimalZero(maxDisplayScale), nil
	}
	val *= 0.434294481903252
	rscale := clampScale(max(minSigDigits-int64(val), int64(dscale(base)), int64(dscale(y))))
	c := workCtx(int64(math.Ceil(val))-min(dw, 0)+guardDigits, rscale)
	if _, err := c.Ln(&lnx, base); err != nil {
		return nil, err
	}
	if _, err := c.Mul(&prod, &lnx, y); err != nil {
		return nil, err
	}
	r, err := expScaled(&prod, rscale)
	if err != nil {
		return nil, err
	}
	if neg && !r.IsZero() {
		r.Negative = true
	}
	return r, nil
}
