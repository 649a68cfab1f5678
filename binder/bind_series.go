package binder

import (
	"math"

	"streamdb/expr"
	"streamdb/sqlerr"
	"streamdb/types"
)

// generate_series(start, stop [, step]), a set-returning function
// (bind_srf.go). Over integers (int4, or
// int8 if an argument is) and numeric the step defaults to 1; over
// timestamps it is an interval. The series is generated when the query
// runs (its arguments may be parameters), value by value where it is the
// only call of its node (srfRows); a series that must be held whole (next
// to other calls, ROWS FROM) is at most maxSeriesRows rows.

// maxSeriesRows bounds one series that is held whole, so that a mistaken
// bound fails (54000) instead of filling memory.
const maxSeriesRows = 10_000_000

// bindSeries checks the arguments' types and gives the column its type.
func bindSeries(args []expr.Expr) (SRFCall, error) {
	if len(args) < 2 || len(args) > 3 {
		return SRFCall{}, noSuchFunction("generate_series", args, "generate_series(start, stop [, step]) over integers, numerics, or timestamps with an interval step.")
	}
	if args[0].Type() == types.Unknown && args[1].Type() == types.Unknown {
		return SRFCall{}, sqlerr.New(sqlerr.AmbiguousFunction, "function generate_series(unknown, unknown) is not unique").
			WithHint("Cast the arguments, as in generate_series(1::int, 5).")
	}
	t := seriesType(args[0].Type(), args[1].Type())
	if t == types.Unknown {
		return SRFCall{}, seriesSignatureError(args)
	}
	stepType := t
	if t.IsTime() {
		stepType = types.Interval
		if len(args) != 3 {
			return SRFCall{}, seriesSignatureError(args)
		}
	}
	for i := range args {
		want := t
		if i == 2 {
			want = stepType
		}
		c, err := expr.Cast(args[i], want)
		if err != nil || c.Type() != want {
			return SRFCall{}, seriesSignatureError(args)
		}
		args[i] = c
	}
	return SRFCall{Name: "generate_series", Args: args, T: t, rows: func(v []types.Datum) ([]types.Datum, error) {
		return seriesRows(v, t)
	}, each: func(v []types.Datum, emit func(types.Datum) error) error {
		return seriesEach(v, t, 0, emit)
	}}, nil
}

// seriesType is the type of a series from start and stop.
func seriesType(a, b types.Type) types.Type {
	if a == types.Unknown {
		a = b
	}
	if b == types.Unknown {
		b = a
	}
	switch {
	case (a.IsTime() || a == types.Date) && (b.IsTime() || b == types.Date):
		// PostgreSQL reads a date as timestamptz here (its preferred
		// time type).
		if a == types.Timestamp && b == types.Timestamp {
			return types.Timestamp
		}
		return types.Timestamptz
	case a.IsInteger() && b.IsInteger():
		if a == types.Int8 || b == types.Int8 {
			return types.Int8
		}
		return types.Int4
	case a.IsNumeric() && b.IsNumeric():
		return types.Numeric
	}
	return types.Unknown
}

func seriesSignatureError(args []expr.Expr) error {
	ts := ""
	for i, a := range args {
		if i > 0 {
			ts += ", "
		}
		ts += a.Type().String()
	}
	return sqlerr.New(sqlerr.UndefinedFunction, "function generate_series(%s) does not exist", ts).
		WithHint("Write generate_series(start, stop [, step]) over integers, numerics, or timestamps with an interval step.")
}

// seriesRows generates the series of type t from the arguments' values
// (start, stop [, step]): none when one is NULL.
func seriesRows(vals []types.Datum, t types.Type) ([]types.Datum, error) {
	var out []types.Datum
	err := seriesEach(vals, t, maxSeriesRows, func(d types.Datum) error {
		out = append(out, d)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// seriesEach is seriesRows handing each value to emit as it is made,
// failing past limit values (0: no limit).
func seriesEach(vals []types.Datum, t types.Type, limit int, emit func(types.Datum) error) error {
	for _, v := range vals {
		if v.IsNull() {
			return nil
		}
	}
	var step expr.Expr = &expr.Const{D: types.NewInt(1), T: types.Int4}
	if t == types.Numeric {
		d, _ := types.ParseText("1", types.Numeric)
		step = &expr.Const{D: d, T: types.Numeric}
	}
	if len(vals) == 3 {
		st := t
		if t.IsTime() {
			st = types.Interval
		}
		step = &expr.Const{D: vals[2], T: st}
	}
	sv, _ := step.Eval(nil)
	var zero types.Datum
	switch step.Type() {
	case types.Interval:
		zero = types.NewInterval(0, 0, 0)
	case types.Numeric:
		zero, _ = types.ParseText("0", types.Numeric)
	default:
		zero = types.NewInt(0)
	}
	dir := types.Compare(sv, zero)
	if dir == 0 {
		return sqlerr.New(sqlerr.InvalidParameterValue, "step size cannot equal zero")
	}
	cur, stop := vals[0], vals[1]
	if (t == types.Int4 || t == types.Int8) && cur.K == types.KindInt && stop.K == types.KindInt && sv.K == types.KindInt {
		return intSeriesEach(cur.I, stop.I, sv.I, t, limit, emit)
	}
	n := 0
	for {
		c := types.Compare(cur, stop)
		if (dir > 0 && c > 0) || (dir < 0 && c < 0) {
			return nil
		}
		if limit > 0 && n >= limit {
			return sqlerr.New(sqlerr.ProgramLimitExceeded, "generate_series would return more than %d rows", limit).
				WithHint("Narrow the range or take a larger step.")
		}
		n++
		if err := emit(cur); err != nil {
			return err
		}
		next, err := expr.Binary("+", &expr.Const{D: cur, T: t}, step)
		if err != nil {
			return err
		}
		if next, err = expr.Cast(next, t); err != nil {
			return err
		}
		nv, err := next.Eval(nil)
		if err != nil {
			// Past the type's range: the series ends, as in PostgreSQL.
			return nil
		}
		cur = nv
	}
}

// intSeriesEach is seriesEach over int4 or int8 (step not 0), in plain
// integer arithmetic: the series ends where the next value would leave
// the type's range, as in PostgreSQL.
func intSeriesEach(cur, stop, step int64, t types.Type, limit int, emit func(types.Datum) error) error {
	lo, hi := int64(math.MinInt64), int64(math.MaxInt64)
	if t == types.Int4 {
		lo, hi = math.MinInt32, math.MaxInt32
	}
	for n := 0; (step > 0 && cur <= stop) || (step < 0 && cur >= stop); n++ {
		if limit > 0 && n >= limit {
			return sqlerr.New(sqlerr.ProgramLimitExceeded, "generate_series would return more than %d rows", limit).
				WithHint("Narrow the range or take a larger step.")
		}
		if err := emit(types.NewInt(cur)); err != nil {
			return err
		}
		if (step > 0 && cur > hi-step) || (step < 0 && cur < lo-step) {
			return nil
		}
		cur += step
	}
	return nil
}
