package expr

import (
	"fmt"
	"math"

	"streamdb/sqlerr"
	"streamdb/types"
)

// time and timetz (types/timeofday.go): casts, operators, extract and the
// constructors, as PostgreSQL 15's date.c computes them. The session time
// zone is UTC, so the casts that take it (time to timetz, timestamptz to
// timetz) give a zone of +00.

// castTimeOfDay converts d to time or timetz as PostgreSQL's casts do; ok is
// false for kinds that have no such cast. A timestamp's infinities become
// NULL (timestamp_time does so).
func castTimeOfDay(d types.Datum, t types.Type) (v types.Datum, ok bool) {
	var us int64
	switch d.K {
	case types.KindTime, types.KindTimeTZ:
		us = d.I
		if d.K == types.KindTimeTZ && t == types.TimeTZ {
			return d, true
		}
	case types.KindTimestamp:
		if !types.TimestampFinite(d.I) {
			return types.Null, true
		}
		us = d.I - floorDiv(d.I, types.UsecsPerDay)*types.UsecsPerDay
	case types.KindInterval:
		// interval_time: the interval's time part modulo a day; its
		// months and days do not count.
		us = d.I % types.UsecsPerDay
		if us < 0 {
			us += types.UsecsPerDay
		}
	default:
		return types.Null, false
	}
	if t == types.TimeTZ {
		return types.NewTimeTZ(us, 0), true
	}
	return types.NewTimeOfDay(us), true
}

// timeOfDayCastable lists PostgreSQL's casts from and to time and timetz
// (besides text).
func timeOfDayCastable(from, to types.Type) bool {
	switch to {
	case types.Time:
		return from == types.TimeTZ || from.IsTime() || from == types.Interval
	case types.TimeTZ:
		return from == types.Time || from == types.Timestamptz
	case types.Interval:
		return from == types.Time
	}
	return false
}

// wrapTime is PostgreSQL's time_pl_interval arithmetic: a time of day
// plus microseconds, wrapped into 00:00:00..23:59:59.999999.
func wrapTime(us int64) int64 {
	us %= types.UsecsPerDay
	if us < 0 {
		us += types.UsecsPerDay
	}
	return us
}

// timeOfDayArith builds the operators over time and timetz; ok is false
// when neither operand is one. A time operand of an operator that has no
// time variant is read as an interval, PostgreSQL's implicit cast (time
// '12:00' * 2 is interval '24:00:00').
func timeOfDayArith(op string, l, r Expr) (e Expr, ok bool, err error) {
	lt, rt := l.Type(), r.Type()
	if !lt.IsTimeOfDay() && !rt.IsTimeOfDay() {
		return nil, false, nil
	}
	mk := func(t types.Type, fn func(a, b types.Datum) (types.Datum, error)) (Expr, bool, error) {
		return binary(&Func{Name: op, Infix: true, Args: []Expr{l, r}, T: t}, func(a, b types.Datum) (types.Datum, error) {
			if a.IsNull() || b.IsNull() {
				return types.Null, nil
			}
			return fn(a, b)
		}), true, nil
	}
	sign := int64(1)
	if op == "-" {
		sign = -1
	}
	plusMinus := op == "+" || op == "-"
	switch {
	case lt == types.Time && rt == types.Time && op == "-":
		return mk(types.Interval, func(a, b types.Datum) (types.Datum, error) {
			return types.NewInterval(0, 0, a.I-b.I), nil
		})
	case lt == types.Time && rt == types.Time && op == "+":
		return nil, true, sqlerr.New(sqlerr.AmbiguousFunction, "operator is not unique: %s + %s", lt, rt).
			WithHint("Could not choose a best candidate operator. You might need to add explicit type casts.")
	case lt.IsTimeOfDay() && rt == types.Interval && plusMinus:
		return mk(lt, func(a, b types.Datum) (types.Datum, error) {
			a.I = wrapTime(a.I + sign*(b.I%types.UsecsPerDay))
			return a, nil
		})
	case lt == types.Interval && rt.IsTimeOfDay() && op == "+":
		l, r = r, l
		return mk(rt, func(a, b types.Datum) (types.Datum, error) {
			a.I = wrapTime(a.I + b.I%types.UsecsPerDay)
			return a, nil
		})
	case lt.IsTimeOfDay() && rt == types.Date && op == "+":
		l, r = r, l
		lt, rt = rt, lt
		fallthrough
	case lt == types.Date && rt.IsTimeOfDay() && op == "+":
		res := types.Timestamp
		if rt == types.TimeTZ {
			res = types.Timestamptz
		}
		return mk(res, dateAddTime)
	}
	// No time variant: the time is an interval here.
	if lt == types.Time {
		if l, err = Cast(l, types.Interval); err != nil {
			return nil, true, err
		}
	}
	if rt == types.Time {
		if r, err = Cast(r, types.Interval); err != nil {
			return nil, true, err
		}
	}
	if l.Type().IsTimeOfDay() || r.Type().IsTimeOfDay() {
		return nil, true, opTypeError(op, lt, rt)
	}
	e, err = arith(op, l, r)
	return e, true, err
}

// unifyTimeOfDay resolves an unknown literal added to or subtracted from
// a time of day as PostgreSQL does where the other operand's type does not
// apply: time + '...' is time + interval (there is no time + time, and
// interval is preferred over date), timetz - '...' is timetz - interval,
// and timetz + '...' is ambiguous (42725).
func unifyTimeOfDay(op string, l, r Expr) (Expr, Expr, error) {
	lt, rt := l.Type(), r.Type()
	if op != "+" && op != "-" || !(lt.IsTimeOfDay() && rt == types.Unknown || rt.IsTimeOfDay() && lt == types.Unknown) {
		return l, r, nil
	}
	tod := lt
	if rt != types.Unknown {
		tod = rt
	}
	var err error
	switch {
	case op == "+" && tod == types.TimeTZ:
		return nil, nil, sqlerr.New(sqlerr.AmbiguousFunction, "operator is not unique: %s + %s", lt, rt).
			WithHint("Could not choose a best candidate operator. You might need to add explicit type casts.")
	case op == "-" && tod == types.Time || lt == types.Unknown && op == "-":
		// time - '...' is time - time; '...' - time(tz) is left to unify.
	case lt == types.Unknown:
		l, err = Cast(l, types.Interval)
	default:
		r, err = Cast(r, types.Interval)
	}
	return l, r, err
}

// dateAddTime is date + time (a timestamp) and date + timetz (the
// timestamptz of that local time in the value's zone), as PostgreSQL's
// datetime_timestamp and datetimetz_timestamptz.
func dateAddTime(date, tod types.Datum) (types.Datum, error) {
	ts, err := DateToTimestamp(date.I)
	if err != nil || !types.TimestampFinite(ts.I) {
		return ts, err
	}
	us := ts.I + tod.I
	if tod.K == types.KindTimeTZ {
		us += int64(tod.Zone()) * 1e6
	}
	return types.CheckTimestamp(us)
}

// timeOfDayCompareCast brings a time compared with a timetz or an interval
// to the other side's type (PostgreSQL's implicit casts); ok is false when
// the pair is not one of these.
func timeOfDayCompareCast(l, r Expr) (Expr, Expr, bool, error) {
	lt, rt := l.Type(), r.Type()
	var err error
	switch {
	case lt == types.Time && (rt == types.TimeTZ || rt == types.Interval):
		l, err = Cast(l, rt)
	case rt == types.Time && (lt == types.TimeTZ || lt == types.Interval):
		r, err = Cast(r, lt)
	default:
		return l, r, false, nil
	}
	return l, r, true, err
}

// timeUnits are the units PostgreSQL knows for extract but refuses for a
// time of day (0A000); other unknown units are 22023.
var timeUnits = map[string]bool{"day": true, "month": true, "quarter": true, "year": true, "decade": true,
	"century": true, "millennium": true, "dow": true, "isodow": true, "doy": true, "week": true, "isoyear": true,
	"julian": true, "timezone": true, "timezone_hour": true, "timezone_minute": true}

// extractTimeOfDay is extract/date_part of a time or timetz (PostgreSQL's
// time_part_common and timetz_part_common).
func extractTimeOfDay(unit string, d types.Datum, t types.Type, numeric bool) (types.Datum, error) {
	unit = canonicalUnit(unit)
	us := d.I
	zone := int64(d.Zone())
	var f timeField
	switch {
	case unit == "microseconds":
		f = timeField{v: us % 60e6}
	case unit == "milliseconds":
		f = secondsField(us%60e6, 3)
	case unit == "second":
		f = secondsField(us%60e6, 6)
	case unit == "minute":
		f.v = us / 60e6 % 60
	case unit == "hour":
		f.v = us / 3600e6
	case unit == "epoch":
		if !numeric {
			// timetz's float: the time's seconds, then the zone added.
			return types.NewFloat(float64(us)/1e6 + float64(zone)), nil
		}
		f = timeField{v: us + zone*1e6, scale: 6}
	case t == types.TimeTZ && unit == "timezone":
		f.v = -zone
	case t == types.TimeTZ && unit == "timezone_hour":
		f.v = -zone / 3600
	case t == types.TimeTZ && unit == "timezone_minute":
		f.v = -zone / 60 % 60
	case timeUnits[unit]:
		return types.Null, sqlerr.New(sqlerr.FeatureNotSupported, "unit \"%s\" not supported for type %s", unit, t)
	default:
		return types.Null, sqlerr.New(sqlerr.InvalidParameterValue, "unit \"%s\" not recognized for type %s", unit, t)
	}
	return f.datum(numeric), nil
}

// truncTimeOfDay is date_trunc(unit, time): PostgreSQL reads the time as
// an interval (interval_trunc), so the result is an interval.
func truncTimeOfDay(unit string, iv types.Datum) (types.Datum, error) {
	unit = canonicalUnit(unit)
	step := map[string]int64{"microseconds": 1, "milliseconds": 1e3, "second": 1e6, "minute": 60e6, "hour": 3600e6}[unit]
	switch {
	case step > 0:
		return types.NewInterval(iv.Months, iv.Days, iv.I/step*step), nil
	case unit == "day":
		return types.NewInterval(iv.Months, iv.Days, 0), nil
	case unit == "month", unit == "quarter", unit == "year", unit == "decade", unit == "century", unit == "millennium":
		return types.NewInterval(iv.Months, 0, 0), nil
	case unit == "week":
		return types.Null, sqlerr.New(sqlerr.FeatureNotSupported, "unit \"%s\" not supported for type interval", unit).
			WithHint("Perhaps you meant to use date_trunc with timestamp or timestamp with time zone.")
	}
	return types.Null, sqlerr.New(sqlerr.InvalidParameterValue, "unit \"%s\" not recognized for type interval", unit)
}

// makeTime is make_time(hour, min, sec), as PostgreSQL's (22008 past
// 24:00:00).
func makeTime(h, m int64, sec float64) (types.Datum, error) {
	us := math.RoundToEven(sec * 1e6)
	if h < 0 || h > 24 || m < 0 || m >= 60 || math.IsNaN(sec) || us < 0 || us > 60e6 ||
		(h*60+m)*60e6+int64(us) > types.UsecsPerDay {
		return types.Null, sqlerr.New(sqlerr.DatetimeFieldOverflow, "time field value out of range: %d:%02d:%s", h, m, fmt.Sprintf("%02g", sec))
	}
	return types.NewTimeOfDay((h*60+m)*60e6 + int64(us)), nil
}

// currentTimeOfDay is current_time (timetz) and localtime (time): now()
// cast, so that it is one value per statement, rounded to the precision
// given as its argument (a constant).
func currentTimeOfDay(name string, args []Expr) (Expr, error) {
	if len(args) > 1 {
		return nil, wrongArgs(name, args)
	}
	t := types.TimeTZ
	if name == "localtime" {
		t = types.Time
	}
	var m types.Modifier
	if len(args) == 1 {
		c, ok := args[0].(*Const)
		if !ok || c.D.K != types.KindInt {
			return nil, sqlerr.New(sqlerr.SyntaxError, "the precision of %s must be an integer constant", name)
		}
		if c.D.I < 0 {
			return nil, sqlerr.New(sqlerr.InvalidParameterValue, "%s(%d) precision must not be negative", map[bool]string{true: "TIME WITH TIME ZONE", false: "TIME"}[t == types.TimeTZ], c.D.I)
		}
		m = types.Modifier{TimePrecision: int(min(c.D.I, types.MaxTimePrecision)), HasTimePrecision: true}
	}
	now, err := Call("now", nil)
	if err != nil {
		return nil, err
	}
	return CastWithModifier(now, t, m, true)
}
