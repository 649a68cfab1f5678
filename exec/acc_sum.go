package exec

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/cockroachdb/apd/v3"

	"streamdb/expr"
	"streamdb/sqlerr"
	"streamdb/storage/keyenc"
	"streamdb/types"
)

// sumAcc is sum(): PostgreSQL's result types (bigint over smallint and
// integer, numeric over bigint and numeric, the argument's type over
// floats and interval) and its errors. A sum never wraps: an int64 sum
// that would overflow (22003 "bigint out of range"), an interval out of
// range (22008), a float sum that overflows to infinity from finite
// values (22003) and a numeric sum past numeric's range (22003) are
// errors of the row that would cause them, which leaves the state as it
// was (the aggregate skips the row). Numeric sums are exact, at any
// number of digits.
//
// n counts non-NULL inputs so that the sum of nothing is NULL. With
// specials (layout catalog.DataflowSumSpecials on), NaN and infinite
// inputs of a numeric or float sum are counted apart from the finite sum,
// as PostgreSQL's moving numeric sums do, so retracting them restores the
// finite sum; older views' state holds the sum alone, where an infinity
// once added stays.
type sumAcc struct {
	argType, resType types.Type
	specials         bool
	n                int64
	i                int64
	f                float64
	d                apd.Decimal
	// pend holds integer inputs of a numeric sum not yet added to d: the
	// sum is d + pend. An int64 addition allocates nothing and is far
	// cheaper than an exact decimal one; pend is folded into d when it
	// would overflow and before any decimal input is added (so d's range
	// check sees every decimal sum it did before).
	pend            int64
	iv              types.Datum
	nan, pinf, ninf int64 // with specials: counts of NaN, +Inf, -Inf inputs
}

// exactCtx adds numerics without rounding (precision 0); numeric's own
// range is checked after (types.CheckNumeric).
var exactCtx = func() *apd.Context {
	c := apd.BaseContext
	c.Precision = 0
	return &c
}()

// errBigintRange is PostgreSQL's error for an int8 sum past int64.
func errBigintRange() error {
	return sqlerr.New(sqlerr.NumericValueOutOfRange, "bigint out of range")
}

// addInt64 returns x + y (sign > 0) or x - y, and false if it overflows.
func addInt64(x, y, sign int64) (int64, bool) {
	if sign > 0 {
		r := x + y
		return r, !((x >= 0) == (y >= 0) && (r >= 0) != (x >= 0))
	}
	r := x - y
	return r, !((x >= 0) != (y >= 0) && (r >= 0) != (x >= 0))
}

// errFloatOverflow is PostgreSQL's error for float arithmetic that
// overflows.
func errFloatOverflow() error {
	return sqlerr.New(sqlerr.NumericValueOutOfRange, "value out of range: overflow")
}

func (a *sumAcc) Add(v types.Datum, sign int64) error {
	if v.IsNull() {
		return nil
	}
	var err error
	switch {
	case a.argType == types.Interval:
		err = a.addInterval(v, sign)
	case a.resType == types.Int8:
		r, ok := addInt64(a.i, v.I, sign)
		if !ok {
			return errBigintRange()
		}
		a.i = r
	case a.resType == types.Numeric && v.K == types.KindInt:
		if r, ok := addInt64(a.pend, v.I, sign); ok {
			a.pend = r
			break
		}
		if err = a.fold(); err == nil {
			var x apd.Decimal
			x.SetInt64(v.I)
			err = a.addDecimal(&x, sign)
		}
	case a.resType == types.Numeric:
		if err = a.fold(); err == nil {
			err = a.addDecimal(v.Decimal(), sign)
		}
	default:
		err = a.addFloat(v.Float(), sign)
	}
	if err == nil {
		a.n += sign
	}
	return err
}

func (a *sumAcc) addInterval(v types.Datum, sign int64) error {
	months := int64(a.iv.Months) + sign*int64(v.Months)
	days := int64(a.iv.Days) + sign*int64(v.Days)
	us, ok := addInt64(a.iv.I, v.I, sign)
	if !ok || months != int64(int32(months)) || days != int64(int32(days)) {
		return sqlerr.New(sqlerr.DatetimeFieldOverflow, "interval out of range")
	}
	a.iv = types.NewInterval(int32(months), int32(days), us)
	return nil
}

// fold adds pend into d.
func (a *sumAcc) fold() error {
	if a.pend == 0 {
		return nil
	}
	var x apd.Decimal
	x.SetInt64(a.pend)
	if err := a.addDecimal(&x, 1); err != nil {
		return err
	}
	a.pend = 0
	return nil
}

// total returns the numeric sum d + pend, in dst unless pend is 0.
func (a *sumAcc) total(dst *apd.Decimal) *apd.Decimal {
	if a.pend == 0 {
		return &a.d
	}
	var x apd.Decimal
	x.SetInt64(a.pend)
	if _, err := exactCtx.Add(dst, &a.d, &x); err != nil {
		return &a.d // unreachable: an exact sum of finite numbers (or with d's NaN or infinity, that)
	}
	return dst
}

func (a *sumAcc) addDecimal(x *apd.Decimal, sign int64) error {
	if a.specials && x.Form != apd.Finite {
		a.countSpecial(x.Form == apd.Infinite, x.Negative, sign)
		return nil
	}
	var r apd.Decimal
	var err error
	switch {
	case a.d.Form == apd.Infinite && x.Form == apd.Infinite && (a.d.Negative != x.Negative) == (sign > 0):
		// Infinity - Infinity: NaN, as in PostgreSQL (apd calls it an
		// invalid operation).
		r.Form = apd.NaN
	case sign < 0:
		_, err = exactCtx.Sub(&r, &a.d, x)
	default:
		_, err = exactCtx.Add(&r, &a.d, x)
	}
	if err == nil {
		err = types.CheckNumeric(&r)
	}
	if err != nil {
		if sqlerr.Code(err) == "" {
			err = types.ErrNumericOverflow()
		}
		return err
	}
	a.d.Set(&r)
	return nil
}

func (a *sumAcc) addFloat(x float64, sign int64) error {
	if a.specials && (math.IsNaN(x) || math.IsInf(x, 0)) {
		a.countSpecial(math.IsInf(x, 0), x < 0, sign)
		return nil
	}
	r := a.f + float64(sign)*x
	limit := math.MaxFloat64
	if a.resType == types.Float4 {
		limit = math.MaxFloat32
	}
	if math.Abs(r) > limit && !math.IsInf(a.f, 0) && !math.IsInf(x, 0) {
		return errFloatOverflow()
	}
	a.f = r
	return nil
}

// countSpecial counts a NaN (inf false) or an infinity of the given sign.
func (a *sumAcc) countSpecial(inf, negative bool, sign int64) {
	switch {
	case !inf:
		a.nan += sign
	case negative:
		a.ninf += sign
	default:
		a.pinf += sign
	}
}

// special returns the result the NaN and infinite inputs decide, if they
// do: NaN if any is NaN or both infinities are in, else the infinity.
func (a *sumAcc) special() (nan, inf, negative bool) {
	switch {
	case a.nan > 0 || (a.pinf > 0 && a.ninf > 0):
		return true, false, false
	case a.pinf > 0:
		return false, true, false
	case a.ninf > 0:
		return false, true, true
	}
	return false, false, false
}

func (a *sumAcc) Result() types.Datum {
	if a.n == 0 {
		return types.Null
	}
	switch {
	case a.argType == types.Interval:
		return a.iv
	case a.resType == types.Int8:
		return types.NewInt(a.i)
	case a.resType == types.Numeric:
		if d, ok := a.specialDecimal(); ok {
			return d
		}
		var d apd.Decimal
		d.Set(a.total(&d))
		return types.NewDecimal(&d)
	}
	if f, ok := a.specialFloat(); ok {
		return f
	}
	return types.NewFloat(a.f)
}

func (a *sumAcc) specialDecimal() (types.Datum, bool) {
	nan, inf, neg := a.special()
	switch {
	case nan:
		return types.NewDecimal(&apd.Decimal{Form: apd.NaN}), true
	case inf:
		return types.NewDecimal(&apd.Decimal{Form: apd.Infinite, Negative: neg}), true
	}
	return types.Null, false
}

func (a *sumAcc) specialFloat() (types.Datum, bool) {
	nan, inf, neg := a.special()
	switch {
	case nan:
		return types.NewFloat(math.NaN()), true
	case inf && neg:
		return types.NewFloat(math.Inf(-1)), true
	case inf:
		return types.NewFloat(math.Inf(1)), true
	}
	return types.Null, false
}

// hasSpecials reports whether the state carries the special counts.
func (a *sumAcc) hasSpecials() bool {
	return a.specials && a.argType != types.Interval && a.resType != types.Int8
}

func (a *sumAcc) Marshal(buf []byte) []byte {
	buf = binary.AppendVarint(buf, a.n)
	switch {
	case a.argType == types.Interval:
		return keyenc.AppendValue(buf, a.iv)
	case a.resType == types.Int8:
		return binary.AppendVarint(buf, a.i)
	case a.resType == types.Numeric:
		sum := &a.d
		if a.pend != 0 {
			sum = a.total(new(apd.Decimal))
		}
		buf = keyenc.AppendValue(buf, types.NewDecimal(sum))
	default:
		buf = binary.BigEndian.AppendUint64(buf, math.Float64bits(a.f))
	}
	if a.hasSpecials() {
		buf = binary.AppendVarint(binary.AppendVarint(binary.AppendVarint(buf, a.nan), a.pinf), a.ninf)
	}
	return buf
}

func (a *sumAcc) Unmarshal(b []byte) ([]byte, error) {
	b, err := readVarint(b, &a.n)
	if err != nil {
		return nil, err
	}
	switch {
	case a.argType == types.Interval:
		a.iv, b, err = keyenc.Decode(b)
		return b, err
	case a.resType == types.Int8:
		return readVarint(b, &a.i)
	case a.resType == types.Numeric:
		var d types.Datum
		if d, b, err = keyenc.Decode(b); err != nil {
			return nil, err
		}
		a.d.Set(d.D)
		a.pend = 0
	default:
		if len(b) < 8 {
			return nil, fmt.Errorf("sum state truncated")
		}
		a.f = math.Float64frombits(binary.BigEndian.Uint64(b))
		b = b[8:]
	}
	if a.hasSpecials() {
		for _, c := range []*int64{&a.nan, &a.pinf, &a.ninf} {
			if b, err = readVarint(b, c); err != nil {
				return nil, err
			}
		}
	}
	return b, nil
}

// avgAcc divides a sum by its count when asked for the result.
type avgAcc struct {
	sum     sumAcc
	resType types.Type
}

func (a *avgAcc) Add(v types.Datum, sign int64) error { return a.sum.Add(v, sign) }
func (a *avgAcc) Result() types.Datum {
	if a.sum.n == 0 {
		return types.Null
	}
	if a.resType == types.Interval {
		// interval_avg: the sum divided by the count as interval_div
		// divides, which cannot overflow for a count of at least 1.
		v, err := expr.MulInterval(a.sum.iv, 0, float64(a.sum.n))
		if err != nil {
			return types.Null
		}
		return v
	}
	if a.resType == types.Float8 {
		if f, ok := a.sum.specialFloat(); ok {
			return f
		}
		return types.NewFloat(a.sum.f / float64(a.sum.n))
	}
	if d, ok := a.sum.specialDecimal(); ok {
		return d
	}
	if a.sum.d.Form != apd.Finite {
		return types.NewDecimal(new(apd.Decimal).Set(&a.sum.d)) // older views' NaN or infinity
	}
	var d apd.Decimal
	return expr.DivDecimal(a.sum.total(&d), apd.New(a.sum.n, 0))
}
func (a *avgAcc) Marshal(buf []byte) []byte          { return a.sum.Marshal(buf) }
func (a *avgAcc) Unmarshal(b []byte) ([]byte, error) { return a.sum.Unmarshal(b) }
