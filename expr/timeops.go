package expr

import (
	"math"
	"time"

	"streamdb/sqlerr"
	"streamdb/types"
)

// timeArith handles +/- between timestamps, dates and intervals, and
// intervals times or divided by numbers. Results past their type's range
// raise PostgreSQL's errors (22008) instead of wrapping; infinite
// timestamps and dates stay infinite where PostgreSQL keeps them so.
func timeArith(op string, l, r Expr) (Expr, error) {
	if e, ok, err := timeOfDayArith(op, l, r); ok {
		return e, err
	}
	lt, rt := l.Type(), r.Type()
	mk := func(t types.Type, fn func(a, b types.Datum) (types.Datum, error)) Expr {
		return &Func{Name: op, Infix: true, Args: []Expr{l, r}, T: t, Fn: func(a []types.Datum) (types.Datum, error) {
			if a[0].IsNull() || a[1].IsNull() {
				return types.Null, nil
			}
			return fn(a[0], a[1])
		}}
	}
	sign := int64(1)
	if op == "-" {
		sign = -1
	}
	switch {
	case lt.IsTime() && rt == types.Interval && (op == "+" || op == "-"):
		return mk(lt, func(a, b types.Datum) (types.Datum, error) { return AddInterval(a, b, sign) }), nil
	case lt == types.Interval && rt.IsTime() && op == "+":
		l, r = r, l
		return mk(rt, func(a, b types.Datum) (types.Datum, error) { return AddInterval(a, b, 1) }), nil
	case lt.IsTime() && rt.IsTime() && op == "-":
		return mk(types.Interval, func(a, b types.Datum) (types.Datum, error) {
			if !types.TimestampFinite(a.I) || !types.TimestampFinite(b.I) {
				return types.Null, sqlerr.New(sqlerr.DatetimeFieldOverflow, "cannot subtract infinite timestamps")
			}
			us, ok := sub64(a.I, b.I)
			if !ok {
				return types.Null, types.ErrIntervalRange()
			}
			days := us / 86400e6
			return types.NewInterval(0, int32(days), us-days*86400e6), nil
		}), nil
	case lt.IsInteger() && rt == types.Date && op == "+": // integer + date
		l, r = r, l
		lt, rt = rt, lt
		fallthrough
	case lt == types.Date && rt.IsInteger() && (op == "+" || op == "-"):
		return mk(types.Date, func(a, b types.Datum) (types.Datum, error) {
			if !types.DateFinite(a.I) {
				return a, nil
			}
			days, ok := add64(a.I, sign*b.I)
			if !ok || !types.DateFinite(days) {
				return types.Null, types.ErrDateRange()
			}
			return types.CheckDate(days)
		}), nil
	case lt == types.Date && rt == types.Date && op == "-":
		return mk(types.Int4, func(a, b types.Datum) (types.Datum, error) {
			if !types.DateFinite(a.I) || !types.DateFinite(b.I) {
				return types.Null, sqlerr.New(sqlerr.DatetimeFieldOverflow, "cannot subtract infinite dates")
			}
			return types.NewInt(a.I - b.I), nil
		}), nil
	case lt == types.Date && rt == types.Interval && (op == "+" || op == "-"):
		var err error
		if l, err = Cast(l, types.Timestamp); err != nil {
			return nil, err
		}
		return timeArith(op, l, r)
	case lt == types.Interval && rt == types.Interval && (op == "+" || op == "-"):
		return mk(types.Interval, func(a, b types.Datum) (types.Datum, error) {
			us, ok := add64(a.I, sign*b.I)
			if sign < 0 {
				us, ok = sub64(a.I, b.I)
			}
			if !ok {
				return types.Null, types.ErrIntervalRange()
			}
			return intervalParts(int64(a.Months)+sign*int64(b.Months), int64(a.Days)+sign*int64(b.Days), us)
		}), nil
	case lt.IsNumeric() && rt == types.Interval && op == "*":
		// number * interval is interval * number, as in PostgreSQL.
		return timeArith(op, r, l)
	case lt == types.Interval && rt.IsNumeric() && (op == "*" || op == "/"):
		return mk(types.Interval, func(a, b types.Datum) (types.Datum, error) {
			f := b.Float()
			if op == "/" {
				if f == 0 {
					return types.Null, divByZero()
				}
				return MulInterval(a, 1/f, f)
			}
			return MulInterval(a, f, 0)
		}), nil
	}
	return nil, opTypeError(op, lt, rt)
}

func add64(a, b int64) (int64, bool) {
	s := a + b
	return s, (s > a) == (b > 0)
}

func sub64(a, b int64) (int64, bool) {
	s := a - b
	return s, (s < a) == (b > 0)
}

// intervalParts returns an interval whose months and days must fit int32.
func intervalParts(months, days, us int64) (types.Datum, error) {
	if months < math.MinInt32 || months > math.MaxInt32 || days < math.MinInt32 || days > math.MaxInt32 {
		return types.Null, types.ErrIntervalRange()
	}
	return types.NewInterval(int32(months), int32(days), us), nil
}

// MulInterval multiplies iv by factor as PostgreSQL 15's interval_mul
// does: each field is scaled and truncated, and the fractions of months
// and days cascade into days and microseconds. div, when nonzero, is the
// divisor whose reciprocal factor is (interval_div divides instead).
func MulInterval(iv types.Datum, factor, div float64) (types.Datum, error) {
	scale := func(x float64) float64 {
		if div != 0 {
			return x / div
		}
		return x * factor
	}
	// A division scales by div itself: its reciprocal (factor) may be
	// infinite where the quotient is not ('0'::interval / 5e-324 is 0).
	if div != 0 && math.IsNaN(div) || div == 0 && (math.IsNaN(factor) || math.IsInf(factor, 0)) {
		return types.Null, types.ErrIntervalRange()
	}
	monthsF := scale(float64(iv.Months))
	daysF := scale(float64(iv.Days))
	if math.IsNaN(monthsF) || monthsF < math.MinInt32 || monthsF > math.MaxInt32 ||
		math.IsNaN(daysF) || daysF < math.MinInt32 || daysF > math.MaxInt32 {
		return types.Null, types.ErrIntervalRange()
	}
	months, days := int64(monthsF), int64(daysF)
	// TSROUND: the fractions are rounded to microsecond precision.
	monthRemainderDays := math.RoundToEven((monthsF-float64(months))*30*1e6) / 1e6
	secRemainder := (daysF - float64(days) + monthRemainderDays - math.Trunc(monthRemainderDays)) * 86400
	secRemainder = math.RoundToEven(secRemainder*1e6) / 1e6
	if math.Abs(secRemainder) >= 86400 {
		days += int64(secRemainder / 86400)
		secRemainder -= math.Trunc(secRemainder/86400) * 86400
	}
	days += int64(monthRemainderDays)
	usF := math.RoundToEven(scale(float64(iv.I)) + secRemainder*1e6)
	if math.IsNaN(usF) || usF < math.MinInt64 || usF >= math.MaxInt64 {
		return types.Null, types.ErrIntervalRange()
	}
	return intervalParts(months, days, int64(usF))
}

// AddInterval adds sign*iv to the timestamp ts as PostgreSQL does in UTC:
// months first (calendar arithmetic; a day past the new month's end
// becomes its last day), then days, then microseconds. Infinite
// timestamps stay as they are; a result out of range is 22008.
func AddInterval(ts, iv types.Datum, sign int64) (types.Datum, error) {
	if !types.TimestampFinite(ts.I) {
		return ts, nil
	}
	t := ts.Time()
	if iv.Months != 0 {
		y, m, d := t.Date()
		total := int64(y)*12 + int64(m-1) + sign*int64(iv.Months)
		ny, nm := total/12, total%12
		if nm < 0 {
			ny, nm = ny-1, nm+12
		}
		month := time.Month(nm + 1)
		if last := time.Date(int(ny), month+1, 0, 0, 0, 0, 0, time.UTC).Day(); d > last {
			d = last
		}
		h, mi, s := t.Clock()
		t = time.Date(int(ny), month, d, h, mi, s, t.Nanosecond(), time.UTC)
		if _, err := types.FromTime(t); err != nil {
			return types.Null, err
		}
	}
	if iv.Days != 0 {
		t = t.AddDate(0, 0, int(sign*int64(iv.Days)))
		if _, err := types.FromTime(t); err != nil {
			return types.Null, err
		}
	}
	us := types.MicrosOfTime(t)
	var ok bool
	if sign > 0 {
		us, ok = add64(us, iv.I)
	} else {
		us, ok = sub64(us, iv.I)
	}
	if !ok {
		return types.Null, types.ErrTimestampRange()
	}
	return types.CheckTimestamp(us)
}
