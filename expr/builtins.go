package expr

import (
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cockroachdb/apd/v3"

	"streamdb/sqlerr"
	"streamdb/types"
)

// strict wraps fn so that any NULL argument gives NULL, as for most
// PostgreSQL functions.
func strict(fn func(a []types.Datum) (types.Datum, error)) func(a []types.Datum) (types.Datum, error) {
	return func(a []types.Datum) (types.Datum, error) {
		for _, d := range a {
			if d.IsNull() {
				return types.Null, nil
			}
		}
		return fn(a)
	}
}

// castArgs casts each argument to the matching type of want.
func castArgs(args []Expr, want ...types.Type) ([]Expr, error) {
	out := make([]Expr, len(args))
	for i, a := range args {
		t := want[min(i, len(want)-1)]
		c, err := Cast(a, t)
		if err != nil {
			return nil, err
		}
		out[i] = c
	}
	return out, nil
}

func wrongArgs(name string, args []Expr) error {
	ts := make([]string, len(args))
	for i, a := range args {
		ts[i] = a.Type().String()
	}
	return sqlerr.New(sqlerr.UndefinedFunction, "function %s(%s) does not exist", name, strings.Join(ts, ", ")).
		WithHint("No function matches the given name and argument types. You might need to add explicit type casts.")
}

// Call builds a call of the scalar function name (lower case). It returns
// an UndefinedFunction error for unknown names or argument types.
func Call(name string, args []Expr) (Expr, error) {
	mk := func(t types.Type, args []Expr, fn func(a []types.Datum) (types.Datum, error)) (Expr, error) {
		return &Func{Name: name, Args: args, T: t, Fn: strict(fn)}, nil
	}
	n := len(args)
	if f, ok, err := byteaFunc(name, args); ok {
		return f, err
	}
	if f, ok, err := jsonFunc(name, args); ok {
		return f, err
	}
	if f, ok, err := stringFunc(name, args); ok {
		return f, err
	}
	if f, ok, err := uuidFunc(name, args); ok {
		return f, err
	}
	if name == OrderedArgFunc {
		return orderedArg(args)
	}
	if name == ObjectAggKeyFunc {
		return objectAggKey(args)
	}
	switch name {
	case "length", "char_length", "character_length":
		if n != 1 {
			return nil, wrongArgs(name, args)
		}
		a, err := castArgs(args, types.Text)
		if err != nil {
			return nil, err
		}
		return mk(types.Int4, a, func(v []types.Datum) (types.Datum, error) {
			return types.NewInt(int64(utf8.RuneCountInString(v[0].S))), nil
		})
	case "substr", "substring":
		if n != 2 && n != 3 {
			return nil, wrongArgs(name, args)
		}
		if name == "substring" && isStringOrUnknown(args[1].Type()) && isStringOrUnknown(args[n-1].Type()) {
			return regexpSubstring(args)
		}
		a, err := castArgs(args, types.Text, types.Int8)
		if err != nil {
			return nil, err
		}
		return mk(types.Text, a, func(v []types.Datum) (types.Datum, error) {
			r := []rune(v[0].S)
			start := v[1].I - 1
			end := int64(len(r))
			if len(v) == 3 {
				if v[2].I < 0 {
					return types.Null, sqlerr.New(sqlerr.SubstringError, "negative substring length not allowed")
				}
				end = min(end, start+v[2].I)
			}
			start = max(start, 0)
			if start >= end {
				return types.NewString(""), nil
			}
			return types.NewString(string(r[start:end])), nil
		})
	case "trim", "btrim", "ltrim", "rtrim":
		if n != 1 {
			return nil, wrongArgs(name, args)
		}
		a, err := castArgs(args, types.Text)
		if err != nil {
			return nil, err
		}
		return mk(types.Text, a, func(v []types.Datum) (types.Datum, error) {
			switch name {
			case "ltrim":
				return types.NewString(strings.TrimLeft(v[0].S, " ")), nil
			case "rtrim":
				return types.NewString(strings.TrimRight(v[0].S, " ")), nil
			}
			return types.NewString(strings.Trim(v[0].S, " ")), nil
		})
	case "concat":
		a, err := castArgs(outputText(args), types.Text)
		if err != nil {
			return nil, err
		}
		return &Func{Name: name, Args: a, T: types.Text, Fn: func(v []types.Datum) (types.Datum, error) {
			var sb strings.Builder
			for _, d := range v {
				sb.WriteString(d.S)
			}
			return types.NewString(sb.String()), nil
		}}, nil
	case "abs":
		if n != 1 || !(args[0].Type().IsNumeric() || args[0].Type() == types.Unknown) {
			return nil, wrongArgs(name, args)
		}
		t := args[0].Type()
		if t == types.Unknown {
			t = types.Float8
		}
		a, err := castArgs(args, t)
		if err != nil {
			return nil, err
		}
		return mk(t, a, func(v []types.Datum) (types.Datum, error) {
			switch v[0].K {
			case types.KindInt:
				if v[0].I == math.MinInt64 {
					return types.Null, outOfRange(t)
				}
				if _, err := types.CheckIntRange(abs64(v[0].I), t); err != nil {
					return types.Null, outOfRange(t)
				}
				return types.NewInt(abs64(v[0].I)), nil
			case types.KindDecimal:
				var d apd.Decimal
				d.Abs(v[0].D)
				return types.NewDecimal(&d), nil
			}
			return types.NewFloat(math.Abs(v[0].F)), nil
		})
	case "round", "floor", "ceil", "ceiling", "trunc":
		return rounding(name, args)
	case "power", "pow", "sqrt", "exp", "ln", "log", "sign", "mod":
		return mathFunc(name, args)
	case "greatest", "least":
		return extreme(name, args)
	case "date_trunc":
		if n != 2 {
			return nil, wrongArgs(name, args)
		}
		if args[1].Type() == types.Time {
			// date_trunc(text, interval), through time's implicit cast.
			a, err := castArgs(args, types.Text, types.Interval)
			if err != nil {
				return nil, err
			}
			return mk(types.Interval, a, func(v []types.Datum) (types.Datum, error) {
				return truncTimeOfDay(strings.ToLower(v[0].S), v[1])
			})
		}
		target := types.Timestamp
		if t := args[1].Type(); t == types.Timestamptz || t == types.Date {
			target = types.Timestamptz // date_trunc(text, date) resolves to the timestamptz variant
		}
		a, err := castArgs(args, types.Text, target)
		if err != nil {
			return nil, err
		}
		return mk(target, a, func(v []types.Datum) (types.Datum, error) {
			return truncTimestamp(strings.ToLower(v[0].S), v[1].I)
		})
	case "date_part", "extract", ExtractFunc:
		if n != 2 {
			return nil, wrongArgs(name, args)
		}
		resType := types.Float8
		numeric := name != "date_part"
		if numeric {
			resType = types.Numeric
		}
		switch src := args[1].Type(); {
		case src.IsTimeOfDay():
			a, err := castArgs(args, types.Text, src)
			if err != nil {
				return nil, err
			}
			return mk(resType, a, func(v []types.Datum) (types.Datum, error) {
				return extractTimeOfDay(strings.ToLower(v[0].S), v[1], src, numeric)
			})
		case src == types.Interval:
			a, err := castArgs(args, types.Text, types.Interval)
			if err != nil {
				return nil, err
			}
			return mk(resType, a, func(v []types.Datum) (types.Datum, error) {
				return extractInterval(strings.ToLower(v[0].S), v[1], numeric)
			})
		case src == types.Date && numeric:
			a, err := castArgs(args, types.Text, types.Date)
			if err != nil {
				return nil, err
			}
			return mk(resType, a, func(v []types.Datum) (types.Datum, error) {
				return extractDate(strings.ToLower(v[0].S), v[1].I)
			})
		}
		target := types.Timestamp
		if args[1].Type() == types.Timestamptz {
			target = types.Timestamptz
		}
		a, err := castArgs(args, types.Text, target)
		if err != nil {
			return nil, err
		}
		return mk(resType, a, func(v []types.Datum) (types.Datum, error) {
			us := v[1].I
			return extractTime(strings.ToLower(v[0].S), us, types.TimestampFinite(us), false, numeric, target.String())
		})
	}
	if f, ok, err := pgCatalogFunc(name, args); ok {
		return f, err
	}
	return nil, sqlerr.New(sqlerr.UndefinedFunction, "function %s does not exist", name)
}

func rounding(name string, args []Expr) (Expr, error) {
	if len(args) < 1 || len(args) > 2 || (len(args) == 2 && name != "round" && name != "trunc") {
		return nil, wrongArgs(name, args)
	}
	t := args[0].Type()
	if t.IsInteger() || t == types.Unknown {
		t = types.Numeric
		if len(args) == 1 && args[0].Type().IsInteger() {
			t = types.Float8
		}
	}
	if t == types.Float4 {
		t = types.Float8 // PostgreSQL has only the double precision variants
	}
	if !t.IsNumeric() || (len(args) == 2 && t != types.Numeric) {
		return nil, wrongArgs(name, args)
	}
	// The scale is an integer: PostgreSQL casts no other type to one
	// implicitly (round(1.5, 1::float8) does not exist).
	if len(args) == 2 && !args[1].Type().IsInteger() && args[1].Type() != types.Unknown {
		return nil, wrongArgs(name, args)
	}
	a, err := castArgs(args, t, types.Int8)
	if err != nil {
		return nil, err
	}
	return &Func{Name: name, Args: a, T: t, Fn: strict(func(v []types.Datum) (types.Datum, error) {
		if v[0].K == types.KindDecimal {
			if v[0].D.Form != apd.Finite {
				return v[0], nil // NaN and the infinities round to themselves
			}
			scale := int32(0)
			if len(v) == 2 {
				// PostgreSQL clamps the scale to what a numeric can hold:
				// NUMERIC_DSCALE_MAX digits after the point, and one digit
				// past NUMERIC_WEIGHT_MAX before it.
				scale = int32(min(max(v[1].I, -131073), 16383))
			}
			if v[0].D.IsZero() || (int64(v[0].D.NumDigits())+int64(v[0].D.Exponent) < -int64(scale) &&
				(name == "round" || name == "trunc")) {
				// Below half a unit of the scale: zero (apd cannot
				// quantize to an exponent past its limits).
				return types.NewDecimal(apd.New(0, -max(scale, 0))), nil
			}
			var r apd.Decimal
			// Enough digits for every integer digit, the scale and a carry.
			c := decCtx.WithPrecision(uint32(max(40, int64(v[0].D.NumDigits())+int64(v[0].D.Exponent)+int64(max(scale, 0))+2)))
			switch name {
			case "round":
				c.Rounding = apd.RoundHalfUp
			case "floor":
				c.Rounding = apd.RoundFloor
			case "ceil", "ceiling":
				c.Rounding = apd.RoundCeiling
			case "trunc":
				c.Rounding = apd.RoundDown
			}
			if _, err := c.Quantize(&r, stickyTail(v[0].D, scale), -scale); err != nil {
				return types.Null, err
			}
			return types.NewDecimal(NormalizeZero(&r)), nil
		}
		f := v[0].F
		switch name {
		case "round":
			f = math.RoundToEven(f)
		case "floor":
			f = math.Floor(f)
		case "ceil", "ceiling":
			f = math.Ceil(f)
		case "trunc":
			f = math.Trunc(f)
		}
		return types.NewFloat(f), nil
	})}, nil
}

// stickyTail returns d, or when d lies below a tenth of a unit of its
// rounding scale, a stand-in of the same sign that rounds the same way in
// every mode, a tenth of a unit: apd's Quantize ignores the rounding mode
// when it drops more digits than d has, which made ceil(1e-20) 0.
func stickyTail(d *apd.Decimal, scale int32) *apd.Decimal {
	if d.IsZero() || int64(d.NumDigits())+int64(d.Exponent) >= -int64(scale) {
		return d
	}
	t := apd.New(1, -scale-1)
	t.Negative = d.Negative
	return t
}

func truncTime(unit string, t time.Time) (time.Time, error) {
	switch unit {
	case "microseconds":
		return t, nil
	case "milliseconds":
		return t.Truncate(time.Millisecond), nil
	case "second":
		return t.Truncate(time.Second), nil
	case "minute":
		return t.Truncate(time.Minute), nil
	case "hour":
		return t.Truncate(time.Hour), nil
	case "day":
		return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC), nil
	case "week":
		d := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
		wd := (int(d.Weekday()) + 6) % 7 // Monday is 0
		return d.AddDate(0, 0, -wd), nil
	case "month":
		return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC), nil
	case "quarter":
		m := (int(t.Month())-1)/3*3 + 1
		return time.Date(t.Year(), time.Month(m), 1, 0, 0, 0, 0, time.UTC), nil
	case "year":
		return time.Date(t.Year(), 1, 1, 0, 0, 0, 0, time.UTC), nil
	case "decade", "century", "millennium":
		// PostgreSQL's timestamp_trunc on astronomical years (1 BC is 0).
		y, n := t.Year(), map[string]int{"decade": 10, "century": 100, "millennium": 1000}[unit]
		switch {
		case unit == "decade" && y > 0:
			y = y / 10 * 10
		case unit == "decade":
			y = -((8 - (y - 1)) / 10) * 10
		case y > 0:
			y = (y+n-1)/n*n - n + 1
		default:
			y = -((n-1-(y-1))/n)*n + 1
		}
		return time.Date(y, 1, 1, 0, 0, 0, 0, time.UTC), nil
	}
	return t, sqlerr.New(sqlerr.InvalidParameterValue, "unit %q not recognized for type timestamp", unit)
}

// unitAliases maps the other spellings PostgreSQL accepts for date_part
// fields to the canonical ones.
var unitAliases = map[string]string{
	"years": "year", "y": "year", "yr": "year", "yrs": "year", "months": "month", "mon": "month", "mons": "month",
	"days": "day", "d": "day", "hours": "hour", "h": "hour", "hr": "hour", "hrs": "hour",
	"minutes": "minute", "m": "minute", "min": "minute", "mins": "minute",
	"seconds": "second", "s": "second", "sec": "second", "secs": "second",
	"millisecond": "milliseconds", "ms": "milliseconds", "msec": "milliseconds", "msecs": "milliseconds",
	"microsecond": "microseconds", "us": "microseconds", "usec": "microseconds", "usecs": "microseconds",
	"weeks": "week", "w": "week", "quarters": "quarter", "qtr": "quarter",
}

// mathFunc implements the math functions (and mod, an operator).
func mathFunc(name string, args []Expr) (Expr, error) {
	want := map[string]int{"power": 2, "pow": 2, "mod": 2, "log": 1}[name]
	if want == 0 {
		want = 1
	}
	if len(args) != want && !(name == "log" && len(args) == 2) {
		return nil, wrongArgs(name, args)
	}
	if name == "mod" {
		if len(args) != 2 {
			return nil, wrongArgs(name, args)
		}
		return Binary("%", args[0], args[1])
	}
	// log(b, x) has only a numeric variant; the others take numeric when
	// an argument is numeric and none is a float.
	if numericMathResolves(args) {
		return numericMathFunc(name, args)
	}
	if name == "log" && len(args) == 2 {
		for _, a := range args {
			if t := a.Type(); t != types.Unknown && !t.IsInteger() {
				return nil, wrongArgs(name, args)
			}
		}
		return numericMathFunc(name, args)
	}
	a, err := castArgs(args, types.Float8)
	if err != nil {
		return nil, err
	}
	return &Func{Name: name, Args: a, T: types.Float8, Fn: strict(func(v []types.Datum) (types.Datum, error) {
		x := v[0].F
		switch name {
		case "power", "pow":
			return floatPow(x, v[1].F)
		case "sqrt":
			return floatSqrt(x)
		case "exp":
			return floatExp(x)
		case "ln", "log":
			return floatLog(x, name == "log")
		}
		// sign
		switch {
		case x > 0:
			return types.NewFloat(1), nil
		case x < 0:
			return types.NewFloat(-1), nil
		}
		return types.NewFloat(0), nil
	})}, nil
}

// extreme implements GREATEST and LEAST, which ignore NULL arguments.
func extreme(name string, args []Expr) (Expr, error) {
	if len(args) == 0 {
		return nil, wrongArgs(name, args)
	}
	t, err := commonType(args)
	if err != nil {
		return nil, err
	}
	a, err := castArgs(args, t)
	if err != nil {
		return nil, err
	}
	greatest := name == "greatest"
	return &Func{Name: name, Args: a, T: t, Fn: func(v []types.Datum) (types.Datum, error) {
		best := types.Null
		for _, d := range v {
			if d.IsNull() {
				continue
			}
			if best.IsNull() {
				best = d
				continue
			}
			c := types.Compare(d, best)
			if (greatest && c > 0) || (!greatest && c < 0) {
				best = d
			}
		}
		return best, nil
	}}, nil
}
