package exec

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/big"
	"sort"

	"github.com/cockroachdb/apd/v3"

	"streamdb/expr"
	"streamdb/types"
)

// statsAcc is var_pop, var_samp, stddev_pop and stddev_samp (variance and
// stddev are the _samp ones, as in PostgreSQL). It keeps the count, the
// sum and the sum of squares of its non-NULL inputs exactly, as decimals,
// so that a retraction restores the state exactly; NaN and infinite
// inputs are counted apart and make the result NaN while any is in.
//
// Over integers and numeric the result is numeric, computed as
// PostgreSQL's numeric_stddev_internal does: the numerator
// N*sum(x^2) - sum(x)^2 at twice the largest input scale, divided with
// PostgreSQL's division scale (expr.DivDecimal), and the square root
// correctly rounded to that same scale; a numerator that is not positive
// gives 0. Over floats the exact result is rounded to float8 once, which
// can differ from PostgreSQL's running float computation in the last bit.
type statsAcc struct {
	fn       string // var_pop, var_samp, stddev_pop or stddev_samp
	float    bool   // float8 result
	n        int64
	sum, sq  apd.Decimal
	specials int64
	scales   map[int32]int64 // input scale -> count of inputs with it
}

// isStatsAgg reports whether fn is one of statsAcc's aggregates.
func isStatsAgg(fn string) bool {
	switch fn {
	case "var_pop", "var_samp", "stddev_pop", "stddev_samp":
		return true
	}
	return false
}

func statsResultType(arg types.Type) (types.Type, bool) {
	switch {
	case arg.IsInteger() || arg == types.Numeric:
		return types.Numeric, true
	case arg == types.Float4 || arg == types.Float8:
		return types.Float8, true
	}
	return types.Unknown, false
}

func newStatsAcc(fn string, res types.Type) *statsAcc {
	return &statsAcc{fn: fn, float: res == types.Float8, scales: map[int32]int64{}}
}

func (a *statsAcc) Add(v types.Datum, sign int64) error {
	if v.IsNull() {
		return nil
	}
	var x apd.Decimal
	switch v.K {
	case types.KindInt:
		x.SetInt64(v.I)
	case types.KindFloat:
		if math.IsNaN(v.F) || math.IsInf(v.F, 0) {
			a.specials += sign
			return nil
		}
		if _, err := x.SetFloat64(v.F); err != nil {
			return err
		}
	case types.KindDecimal:
		if v.D.Form != apd.Finite {
			a.specials += sign
			return nil
		}
		x.Set(v.D)
	default:
		return fmt.Errorf("internal error: %s over a non-number", a.fn)
	}
	var sq apd.Decimal
	if _, err := exactCtx.Mul(&sq, &x, &x); err != nil {
		return err
	}
	if sign < 0 {
		x.Neg(&x)
		sq.Neg(&sq)
	}
	if _, err := exactCtx.Add(&a.sum, &a.sum, &x); err != nil {
		return err
	}
	if _, err := exactCtx.Add(&a.sq, &a.sq, &sq); err != nil {
		return err
	}
	if !a.float {
		s := max(0, -x.Exponent)
		if a.scales[s] += sign; a.scales[s] == 0 {
			delete(a.scales, s)
		}
	}
	a.n += sign
	return nil
}

func (a *statsAcc) Result() types.Datum {
	sample := a.fn == "var_samp" || a.fn == "stddev_samp"
	if a.n+a.specials <= 0 || (sample && a.n+a.specials <= 1) {
		return types.Null
	}
	if a.specials > 0 {
		if a.float {
			return types.NewFloat(math.NaN())
		}
		return types.NewDecimal(&apd.Decimal{Form: apd.NaN})
	}
	scale := int32(0)
	for s, c := range a.scales {
		if c > 0 && s > scale {
			scale = s
		}
	}
	// numerator = N*sum(x^2) - sum(x)^2, at scale 2*scale.
	var n, num, sumSq apd.Decimal
	n.SetInt64(a.n)
	exactCtx.Mul(&num, &n, &a.sq)
	exactCtx.Mul(&sumSq, &a.sum, &a.sum)
	exactCtx.Sub(&num, &num, &sumSq)
	var den apd.Decimal
	if sample {
		den.SetInt64(a.n - 1)
	} else {
		den.SetInt64(a.n)
	}
	exactCtx.Mul(&den, &den, &n)
	stddev := a.fn == "stddev_pop" || a.fn == "stddev_samp"
	if a.float {
		if num.Sign() <= 0 {
			return types.NewFloat(0)
		}
		var q apd.Decimal
		c := apd.BaseContext.WithPrecision(40)
		c.Quo(&q, &num, &den)
		if stddev {
			c.Sqrt(&q, &q)
		}
		f, _ := q.Float64()
		return types.NewFloat(f)
	}
	if num.Sign() <= 0 {
		return types.NewDecimal(apd.New(0, 0))
	}
	// Give the numerator PostgreSQL's scale, which the division's scale
	// depends on.
	q := expr.DivDecimal(withScale(&num, 2*scale), &den)
	if !stddev || q.IsNull() {
		return q
	}
	return types.NewDecimal(sqrtRounded(q.D, max(0, -q.D.Exponent)))
}

// withScale is d, exact, written with at least scale digits after the
// point (d's digits past scale are kept).
func withScale(d *apd.Decimal, scale int32) *apd.Decimal {
	out := new(apd.Decimal).Set(d)
	if shift := int64(d.Exponent) + int64(scale); shift > 0 {
		c := out.Coeff.MathBigInt()
		c.Mul(c, new(big.Int).Exp(big.NewInt(10), big.NewInt(shift), nil))
		out.Coeff.SetMathBigInt(c)
		out.Exponent = -scale
	}
	return out
}

// sqrtRounded is the square root of x >= 0 rounded half up to scale
// digits after the point: the integer square root carries one digit more,
// and a truncated root rounds correctly on that digit.
func sqrtRounded(x *apd.Decimal, scale int32) *apd.Decimal {
	// x = coeff * 10^exp; want isqrt(x * 10^(2*(scale+1))).
	shift := int64(x.Exponent) + 2*int64(scale+1)
	v := new(big.Int).Set(x.Coeff.MathBigInt())
	ten := big.NewInt(10)
	if shift >= 0 {
		v.Mul(v, new(big.Int).Exp(ten, big.NewInt(shift), nil))
	} else {
		v.Quo(v, new(big.Int).Exp(ten, big.NewInt(-shift), nil))
	}
	r := new(big.Int).Sqrt(v)
	last := new(big.Int)
	r.QuoRem(r, ten, last)
	if last.Int64() >= 5 {
		r.Add(r, big.NewInt(1))
	}
	var out apd.Decimal
	out.Coeff.SetMathBigInt(r)
	out.Exponent = -scale
	return &out
}

func (a *statsAcc) Marshal(buf []byte) []byte {
	buf = binary.AppendVarint(buf, a.n)
	buf = binary.AppendVarint(buf, a.specials)
	buf = appendDecimalText(buf, &a.sum)
	buf = appendDecimalText(buf, &a.sq)
	keys := make([]int32, 0, len(a.scales))
	for s := range a.scales {
		keys = append(keys, s)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	buf = binary.AppendUvarint(buf, uint64(len(keys)))
	for _, s := range keys {
		buf = binary.AppendVarint(buf, int64(s))
		buf = binary.AppendVarint(buf, a.scales[s])
	}
	return buf
}

func (a *statsAcc) Unmarshal(b []byte) ([]byte, error) {
	var err error
	if b, err = readVarint(b, &a.n); err != nil {
		return nil, err
	}
	if b, err = readVarint(b, &a.specials); err != nil {
		return nil, err
	}
	if b, err = readDecimalText(b, &a.sum); err != nil {
		return nil, err
	}
	if b, err = readDecimalText(b, &a.sq); err != nil {
		return nil, err
	}
	k, w := binary.Uvarint(b)
	if w <= 0 {
		return nil, fmt.Errorf("aggregate state truncated")
	}
	b = b[w:]
	for range k {
		var s, c int64
		if b, err = readVarint(b, &s); err != nil {
			return nil, err
		}
		if b, err = readVarint(b, &c); err != nil {
			return nil, err
		}
		a.scales[int32(s)] = c
	}
	return b, nil
}

// appendDecimalText writes a finite decimal as its length-prefixed text.
func appendDecimalText(buf []byte, d *apd.Decimal) []byte {
	s := d.Text('E')
	buf = binary.AppendUvarint(buf, uint64(len(s)))
	return append(buf, s...)
}

func readDecimalText(b []byte, d *apd.Decimal) ([]byte, error) {
	l, w := binary.Uvarint(b)
	if w <= 0 || uint64(len(b)-w) < l {
		return nil, fmt.Errorf("aggregate state truncated")
	}
	if _, _, err := d.SetString(string(b[w : w+int(l)])); err != nil {
		return nil, err
	}
	return b[w+int(l):], nil
}
