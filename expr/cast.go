package expr

import (
	"math"
	"strconv"
	"strings"

	"github.com/cockroachdb/apd/v3"

	"streamdb/sqlerr"
	"streamdb/types"
)

// CastDatum converts d to type t with PostgreSQL's cast semantics.
func CastDatum(d types.Datum, t types.Type) (types.Datum, error) {
	if d.IsNull() || t == types.Unknown {
		return d, nil
	}
	switch d.K {
	case types.KindString:
		v, err := types.ParseText(d.S, t)
		if err != nil {
			if sqlerr.Code(err) != "" {
				return types.Null, err
			}
			code := sqlerr.InvalidTextRepresentation
			et := t.Elem() // an array's error is its element's
			switch {
			case strings.Contains(err.Error(), "out of range"):
				code = sqlerr.NumericValueOutOfRange
				if et == types.Date || et.IsTime() {
					code = sqlerr.DatetimeFieldOverflow
				}
			case et == types.Date || et.IsTime():
				code = sqlerr.InvalidDatetimeFormat
			}
			return types.Null, sqlerr.New(code, "%s", err.Error())
		}
		return v, nil
	case types.KindJSON, types.KindJSONB:
		if v, ok, err := castJSON(d, t); ok {
			return v, err
		}
	}
	switch t {
	case types.Text, types.Varchar:
		if d.K == types.KindBool {
			// boolean's cast to text spells the word, unlike its output
			// format (t/f).
			return types.NewString(map[bool]string{true: "true", false: "false"}[d.Bool()]), nil
		}
		return types.NewString(types.FormatText(d, kindType(d))), nil
	case types.Bool:
		switch d.K {
		case types.KindBool:
			return d, nil
		case types.KindInt:
			return types.NewBool(d.I != 0), nil
		}
	case types.Int2, types.Int4, types.Int8:
		switch d.K {
		case types.KindInt:
			return rangeErr(types.CheckIntRange(d.I, t))
		case types.KindBool:
			return types.NewInt(d.I), nil
		case types.KindFloat:
			if math.IsNaN(d.F) || math.IsInf(d.F, 0) || math.Abs(d.F) > 9.2e18 {
				return types.Null, sqlerr.New(sqlerr.NumericValueOutOfRange, "%s out of range", t)
			}
			return rangeErr(types.CheckIntRange(int64(math.RoundToEven(d.F)), t))
		case types.KindDecimal:
			if d.D.Form != apd.Finite {
				what := "NaN"
				if d.D.Form == apd.Infinite {
					what = "infinity"
				}
				return types.Null, sqlerr.New(sqlerr.FeatureNotSupported, "cannot convert %s to %s", what, t)
			}
			var r apd.Decimal
			if _, err := decCtx.RoundToIntegralValue(&r, d.D); err != nil {
				return types.Null, err
			}
			i, err := r.Int64()
			if err != nil {
				return types.Null, sqlerr.New(sqlerr.NumericValueOutOfRange, "%s out of range", t)
			}
			return rangeErr(types.CheckIntRange(i, t))
		}
	case types.Float4, types.Float8:
		switch d.K {
		case types.KindInt, types.KindFloat, types.KindDecimal:
			f := d.Float()
			if d.K == types.KindDecimal && d.D.Form == apd.Finite && (math.IsInf(f, 0) || (f == 0 && !d.D.IsZero())) {
				return types.Null, floatRangeErr(f)
			}
			if t == types.Float4 {
				f32 := float64(float32(f))
				if (math.IsInf(f32, 0) && !math.IsInf(f, 0)) || (f32 == 0 && f != 0) {
					return types.Null, floatRangeErr(f32)
				}
				f = f32
			}
			return types.NewFloat(f), nil
		}
	case types.Numeric:
		switch d.K {
		case types.KindInt, types.KindDecimal:
			if err := types.CheckNumeric(d.Decimal()); err != nil {
				return types.Null, err
			}
			return types.NewDecimal(d.Decimal()), nil
		case types.KindFloat:
			switch {
			case math.IsNaN(d.F):
				return types.NewDecimal(&apd.Decimal{Form: apd.NaN}), nil
			case math.IsInf(d.F, 0):
				return types.NewDecimal(&apd.Decimal{Form: apd.Infinite, Negative: d.F < 0}), nil
			}
			dec, _, err := apd.NewFromString(strconv.FormatFloat(d.F, 'g', 15, 64))
			if err != nil {
				return types.Null, err
			}
			return types.NewDecimal(NormalizeZero(dec)), nil // -0 is 0: NUMERIC has no negative zero
		}
	case types.Date:
		switch d.K {
		case types.KindDate:
			return types.CheckDate(d.I)
		case types.KindTimestamp:
			switch d.I {
			case types.TimestampInfinity:
				return types.NewDate(types.DateInfinity), nil
			case types.TimestampNegInfinity:
				return types.NewDate(types.DateNegInfinity), nil
			}
			return types.CheckDate(types.DaysOfTimestamp(d.I))
		}
	case types.Timestamp, types.Timestamptz:
		switch d.K {
		case types.KindTimestamp:
			return types.CheckTimestamp(d.I)
		case types.KindDate:
			return DateToTimestamp(d.I)
		}
	case types.Interval:
		switch d.K {
		case types.KindInterval:
			return d, nil
		case types.KindTime:
			return types.NewInterval(0, 0, d.I), nil // time_interval
		}
	case types.Time, types.TimeTZ:
		if v, ok := castTimeOfDay(d, t); ok {
			return v, nil
		}
	case types.Bytea:
		if d.K == types.KindBytes {
			return d, nil
		}
	case types.UUID:
		if d.K == types.KindUUID {
			return d, nil
		}
	}
	return types.Null, cannotCast(kindType(d), t)
}

// floatRangeErr is PostgreSQL's error for a float result too large (an
// infinity) or too small (zero) for its type.
func floatRangeErr(f float64) error {
	if f == 0 {
		return sqlerr.New(sqlerr.NumericValueOutOfRange, "value out of range: underflow")
	}
	return sqlerr.New(sqlerr.NumericValueOutOfRange, "value out of range: overflow")
}

// DateToTimestamp converts a date's days to a timestamp datum (midnight),
// keeping the infinities; 22008 past the timestamp range.
func DateToTimestamp(days int64) (types.Datum, error) {
	switch days {
	case types.DateInfinity:
		return types.NewTimestamp2000(types.TimestampInfinity), nil
	case types.DateNegInfinity:
		return types.NewTimestamp2000(types.TimestampNegInfinity), nil
	}
	if days < types.DaysOfTimestamp(types.MinTimestampMicros) || days >= types.DaysOfTimestamp(types.EndTimestampMicros) {
		return types.Null, sqlerr.New(sqlerr.DatetimeFieldOverflow, "date out of range for timestamp")
	}
	return types.NewTimestamp2000(types.TimestampOfDays(days)), nil
}

func rangeErr(d types.Datum, err error) (types.Datum, error) {
	if err != nil {
		return types.Null, sqlerr.New(sqlerr.NumericValueOutOfRange, "%s", err.Error())
	}
	return d, nil
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// kindType names the natural type of a datum's kind, for messages and
// text conversion.
func kindType(d types.Datum) types.Type {
	switch d.K {
	case types.KindBool:
		return types.Bool
	case types.KindInt:
		return types.Int8
	case types.KindFloat:
		return types.Float8
	case types.KindDecimal:
		return types.Numeric
	case types.KindString:
		return types.Text
	case types.KindDate:
		return types.Date
	case types.KindTimestamp:
		return types.Timestamp
	case types.KindInterval:
		return types.Interval
	case types.KindBytes:
		return types.Bytea
	case types.KindTime:
		return types.Time
	case types.KindTimeTZ:
		return types.TimeTZ
	case types.KindUUID:
		return types.UUID
	case types.KindJSON:
		return types.JSON
	case types.KindJSONB:
		return types.JSONB
	}
	return types.Unknown
}

// Cast returns e converted to t, folding casts of constants. A cast
// PostgreSQL does not have fails with 42846 naming the source type.
func Cast(e Expr, t types.Type) (Expr, error) {
	src := e.Type()
	if src == t {
		return e, nil
	}
	if p, ok := e.(*Param); ok && p.T == types.Unknown {
		p.T = t
		return p, nil
	}
	if !castable(src, t) {
		return nil, cannotCast(src, t)
	}
	if c, ok := e.(*Const); ok {
		v, err := castFrom(c.D, src, t)
		if err != nil {
			return nil, err
		}
		return &Const{D: v, T: t}, nil
	}
	return unary(&Func{Name: "CAST", Args: []Expr{e}, T: t}, func(a types.Datum) (types.Datum, error) {
		return castFrom(a, src, t)
	}), nil
}

// castFrom is CastDatum knowing the source type, where the datum's kind
// does not say enough: a real is a float of fewer digits, and text output
// depends on the type (timestamptz prints its offset).
func castFrom(d types.Datum, src, t types.Type) (types.Datum, error) {
	if d.IsNull() || src == types.Unknown {
		return CastDatum(d, t)
	}
	switch {
	case src == types.Float4 && t == types.Float8:
		return d, nil
	case src == types.Float4 && t == types.Numeric && d.K == types.KindFloat &&
		!math.IsNaN(d.F) && !math.IsInf(d.F, 0):
		// PostgreSQL's float4_numeric keeps FLT_DIG (6) significant digits.
		dec, _, err := apd.NewFromString(strconv.FormatFloat(d.F, 'g', 6, 32))
		if err != nil {
			return types.Null, err
		}
		return types.NewDecimal(NormalizeZero(dec)), nil
	case src.IsArray() && t.IsArray():
		return castArray(d, src, t)
	case t.IsString() && d.K != types.KindBool && d.K != types.KindString:
		return types.NewString(types.FormatText(d, src)), nil
	}
	return CastDatum(d, t)
}

// cannotCast is PostgreSQL's error for a cast it does not have.
func cannotCast(from, to types.Type) error {
	return sqlerr.New(sqlerr.CannotCoerce, "cannot cast type %s to %s", from, to)
}

// castable follows PostgreSQL's cast catalog for streamdb's types: every
// type converts to and from text, numbers among themselves, boolean only
// to and from integer (int4), dates and timestamps among themselves, and
// the casts of time and timetz (timeOfDayCastable), and arrays to arrays
// whose elements convert.
func castable(from, to types.Type) bool {
	switch {
	case from == to, from == types.Unknown, to.IsString(), from.IsString():
		return true
	case from.IsArray() && to.IsArray():
		return castable(from.Elem(), to.Elem())
	case from.IsArray() || to.IsArray():
		return false
	case from.IsNumeric() && to.IsNumeric():
		return true
	case from == types.Bool && to == types.Int4, from == types.Int4 && to == types.Bool:
		return true
	case (from == types.Date || from.IsTime()) && (to == types.Date || to.IsTime()):
		return true
	case timeOfDayCastable(from, to), jsonCastable(from, to):
		return true
	}
	return false
}

var decCtx = apd.BaseContext.WithPrecision(40)

// opTypeError reports an operator applied to types it has no variant for.
func opTypeError(op string, l, r types.Type) error {
	return sqlerr.New(sqlerr.UndefinedFunction, "operator does not exist: %s %s %s", l, op, r).
		WithHint("No operator matches the given name and argument types. You might need to add explicit type casts.")
}
