package sql

import (
	"streamdb/expr"
	"streamdb/sqlerr"
	"streamdb/types"
)

// generate_series(start, stop [, step]), a set-returning function
// (bind_srf.go). Over integers (int4, or
// int8 if an argument is) and numeric the step defaults to 1; over
// timestamps it is an interval. The series is generated when the query
// runs (its arguments may be parameters) and is at most maxSeriesRows
// rows.

// maxSeriesRows bounds one series, so that a mistaken bound fails (54000)
// instead of filling memory.
const maxSeriesRows = 10_000_000

// bindSeries checks the arguments' types and gives the column its type.
func bindSeries(args []expr.Expr) (srfCall, error) {
	if len(args) < 2 || len(args) > 3 {
		return srfCall{}, sqlerr.New(sqlerr.UndefinedFunction, "function generate_series with %d arguments does not exist", len(args)).
			WithHint("Write generate_series(start, stop [, step]) over integers, numerics, or timestamps with an interval step.")
	}
	if args[0].Type() == types.Unknown && args[1].Type() == types.Unknown {
		return srfCall{}, sqlerr.New(sqlerr.AmbiguousFunction, "function generate_series(unknown, unknown) is not unique").
			WithHint("Cast the arguments, as in generate_series(1::int, 5).")
	}
	t := seriesType(args[0].Type(), args[1].Type())
	if t == types.Unknown {
		return srfCall{}, seriesSignatureError(args)
	}
	stepType := t
	if t.IsTime() {
		stepType = types.Interval
		if len(args) != 3 {
			return srfCall{}, seriesSignatureError(args)
		}
	}
	for i := range args {
		want := t
		if i == 2 {
			want = stepType
		}
		c, err := expr.Cast(args[i], want)
		if err != nil || c.Type() != want {
			return srfCall{}, seriesSignatureError(args)
		}
		args[i] = c
	}
	return srfCall{Name: "generate_series", Args: args, T: t, rows: func(v []types.Datum) ([]types.Datum, error) {
		return seriesRows(v, t)
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
	for _, v := range vals {
		if v.IsNull() {
			return nil, nil
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
		return nil, sqlerr.New(sqlerr.InvalidParameterValue, "step size cannot equal zero")
	}
	cur, stop := vals[0], vals[1]
	var out []types.Datum
	for {
		c := types.Compare(cur, stop)
		if (dir > 0 && c > 0) || (dir < 0 && c < 0) {
			return out, nil
		}
		if len(out) >= maxSeriesRows {
			return nil, sqlerr.New(sqlerr.ProgramLimitExceeded, "generate_series would return more than %d rows", maxSeriesRows).
				WithHint("Narrow the range or take a larger step.")
		}
		out = append(out, cur)
		next, err := expr.Binary("+", &expr.Const{D: cur, T: t}, step)
		if err != nil {
			return nil, err
		}
		if next, err = expr.Cast(next, t); err != nil {
			return nil, err
		}
		nv, err := next.Eval(nil)
		if err != nil {
			// Past the type's range: the series ends, as in PostgreSQL.
			return out, nil
		}
		cur = nv
	}
}
