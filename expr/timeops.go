package expr

import (
	"time"

	"streamdb/types"
)

// timeArith handles +/- between timestamps, dates and intervals.
func timeArith(op string, l, r Expr) (Expr, error) {
	lt, rt := l.Type(), r.Type()
	mk := func(t types.Type, fn func(a, b types.Datum) types.Datum) Expr {
		return &Func{Name: op, Infix: true, Args: []Expr{l, r}, T: t, Fn: func(a []types.Datum) (types.Datum, error) {
			if a[0].IsNull() || a[1].IsNull() {
				return types.Null, nil
			}
			return fn(a[0], a[1]), nil
		}}
	}
	switch {
	case lt.IsTime() && rt == types.Interval && (op == "+" || op == "-"):
		sign := int64(1)
		if op == "-" {
			sign = -1
		}
		return mk(lt, func(a, b types.Datum) types.Datum { return AddInterval(a, b, sign) }), nil
	case lt == types.Interval && rt.IsTime() && op == "+":
		l, r = r, l
		return mk(rt, func(a, b types.Datum) types.Datum { return AddInterval(a, b, 1) }), nil
	case lt.IsTime() && rt.IsTime() && op == "-":
		return mk(types.Interval, func(a, b types.Datum) types.Datum {
			us := a.I - b.I
			days := us / 86400e6
			return types.NewInterval(0, int32(days), us-days*86400e6)
		}), nil
	case lt == types.Date && rt.IsInteger() && (op == "+" || op == "-"):
		sign := int64(1)
		if op == "-" {
			sign = -1
		}
		return mk(types.Date, func(a, b types.Datum) types.Datum { return types.NewDate(a.I + sign*b.I) }), nil
	case lt == types.Date && rt == types.Date && op == "-":
		return mk(types.Int4, func(a, b types.Datum) types.Datum { return types.NewInt(a.I - b.I) }), nil
	case lt == types.Date && rt == types.Interval && (op == "+" || op == "-"):
		var err error
		if l, err = Cast(l, types.Timestamp); err != nil {
			return nil, err
		}
		return timeArith(op, l, r)
	case lt == types.Interval && rt == types.Interval && (op == "+" || op == "-"):
		sign := int64(1)
		if op == "-" {
			sign = -1
		}
		return mk(types.Interval, func(a, b types.Datum) types.Datum {
			return types.NewInterval(a.Months+int32(sign)*b.Months, a.Days+int32(sign)*b.Days, a.I+sign*b.I)
		}), nil
	case lt == types.Interval && rt.IsNumeric() && (op == "*" || op == "/"):
		return mk(types.Interval, func(a, b types.Datum) types.Datum {
			f := b.Float()
			if op == "/" {
				if f == 0 {
					return types.Null
				}
				f = 1 / f
			}
			return types.NewInterval(int32(float64(a.Months)*f), int32(float64(a.Days)*f), int64(float64(a.I)*f))
		}), nil
	}
	return nil, opTypeError(op, lt, rt)
}

// AddInterval adds sign*iv to the timestamp ts: months first (calendar
// arithmetic), then days, then microseconds, as PostgreSQL does in UTC.
func AddInterval(ts, iv types.Datum, sign int64) types.Datum {
	t := ts.Time()
	if iv.Months != 0 || iv.Days != 0 {
		t = t.AddDate(0, int(sign)*int(iv.Months), int(sign)*int(iv.Days))
	}
	t = t.Add(time.Duration(sign*iv.I) * time.Microsecond)
	return types.NewTime(t)
}
