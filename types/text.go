package types

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/cockroachdb/apd/v3"

	"streamdb/sqlerr"
)

// FormatText renders d in PostgreSQL's text output format for type t (with
// DateStyle ISO and TimeZone UTC). NULL has no text form; callers handle it.
func FormatText(d Datum, t Type) string {
	switch d.K {
	case KindNull:
		return ""
	case KindBool:
		if d.I != 0 {
			return "t"
		}
		return "f"
	case KindInt:
		if t == Float8 || t == Float4 {
			return formatFloat(float64(d.I), t)
		}
		return strconv.FormatInt(d.I, 10)
	case KindFloat:
		if (t == Numeric || t.IsInteger()) && !math.IsNaN(d.F) && !math.IsInf(d.F, 0) {
			return strconv.FormatFloat(d.F, 'f', -1, 64)
		}
		return formatFloat(d.F, t)
	case KindDecimal:
		if d.D.Form == apd.Finite && d.D.IsZero() {
			if d.D.Exponent > 0 {
				return "0" // apd writes 0E+2 as 000; NUMERIC has no negative scale
			}
			if d.D.Negative {
				// NUMERIC has no negative zero: -0.00 prints as 0.00.
				var z apd.Decimal
				z.Set(d.D)
				z.Negative = false
				return z.Text('f')
			}
		}
		return d.D.Text('f')
	case KindString:
		return d.S
	case KindBytes:
		return FormatBytea(d.S)
	case KindDate:
		return formatDate(d.I)
	case KindTimestamp:
		return formatTimestamp(d.I, t == Timestamptz)
	case KindInterval:
		return formatInterval(d)
	case KindTime, KindTimeTZ:
		return formatTime(d)
	case KindUUID:
		return FormatUUID(d.S)
	case KindJSON, KindJSONB:
		return d.S
	}
	return fmt.Sprint(d)
}

// FormatColumn is FormatText for a value of a result column, honouring the
// column's output digits (extra_float_digits).
func FormatColumn(d Datum, c Column) string {
	if c.Mod.FloatDigits > 0 && d.K == KindFloat && (c.Type == Float8 || c.Type == Float4) &&
		!math.IsNaN(d.F) && !math.IsInf(d.F, 0) {
		digits := c.Mod.FloatDigits
		if c.Type == Float4 {
			digits -= 9 // FLT_DIG is 6 where DBL_DIG is 15
		}
		// Go's %g matches C's here (two-digit exponents: 1e+06).
		return strconv.FormatFloat(d.F, 'g', max(1, digits), 64)
	}
	if c.Mod.Fixed && d.K == KindString {
		return PadFixed(d.S, c.Mod)
	}
	return FormatText(d, c.Type)
}

func formatFloat(f float64, t Type) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	// PostgreSQL prints the shortest exact digits, in exponent form when
	// the decimal exponent is below -4 or at least DBL_DIG (FLT_DIG).
	bits, maxExp := 64, 15
	if t == Float4 {
		bits, maxExp = 32, 6
	}
	e := strconv.FormatFloat(f, 'e', -1, bits)
	e = pgShortest(f, bits, e)
	i := strings.LastIndexByte(e, 'e')
	exp, _ := strconv.Atoi(e[i+1:])
	if exp < -4 || exp >= maxExp {
		mant, sign, digits := e[:i], e[i+1:i+2], strings.TrimLeft(e[i+2:], "0")
		for len(digits) < 2 {
			digits = "0" + digits
		}
		return mant + "e" + sign + digits
	}
	if e != strconv.FormatFloat(f, 'e', -1, bits) {
		return strconv.FormatFloat(f, 'f', max(0, len(digitsOf(e))-1-exp), bits)
	}
	return strconv.FormatFloat(f, 'f', -1, bits)
}

// ParseTimestamp reads a point in time as TIMESTAMPTZ input does (an
// offset or zone is applied; none means UTC). The infinities have no
// time.Time: they are refused here (ParseText reads them).
func ParseTimestamp(s string) (time.Time, error) {
	d, err := parseTimestampDatum(s, Timestamptz)
	if err != nil {
		return time.Time{}, err
	}
	if !TimestampFinite(d.I) {
		return time.Time{}, sqlerr.New(sqlerr.DatetimeFieldOverflow, "timestamp out of range: \"%s\"", s)
	}
	return TimeOfMicros(d.I), nil
}

// ParseText converts the text form of a value to a Datum of type t, as a
// PostgreSQL input function (or a cast from text) does.
func ParseText(s string, t Type) (Datum, error) {
	if t.IsArray() {
		return ParseArray(s, t.Elem())
	}
	switch t {
	case Unknown, Text, Varchar:
		return NewString(s), nil
	case Bool:
		return parseBool(s)
	case Int2, Int4, Int8:
		return parseInt(s, t)
	case Float4, Float8:
		return parseFloat(s, t)
	case Numeric:
		return ParseNumeric(s)
	case Date:
		return parseDateDatum(s)
	case Timestamp, Timestamptz:
		return parseTimestampDatum(s, t)
	case Interval:
		return ParseInterval(s)
	case Bytea:
		return ParseBytea(s)
	case Time, TimeTZ:
		return parseTimeDatum(s, t)
	case UUID:
		return ParseUUID(s)
	case JSON:
		return ParseJSON(s)
	case JSONB:
		return ParseJSONB(s)
	}
	return Null, fmt.Errorf("cannot convert text to %s", t)
}

// CheckIntRange returns i as a datum of integer type t, or PostgreSQL's
// out-of-range error.
func CheckIntRange(i int64, t Type) (Datum, error) {
	switch t {
	case Int2:
		if i < math.MinInt16 || i > math.MaxInt16 {
			return Null, sqlerr.New(sqlerr.NumericValueOutOfRange, "smallint out of range")
		}
	case Int4:
		if i < math.MinInt32 || i > math.MaxInt32 {
			return Null, sqlerr.New(sqlerr.NumericValueOutOfRange, "integer out of range")
		}
	}
	return NewInt(i), nil
}
