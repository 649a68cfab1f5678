package types

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/cockroachdb/apd/v3"
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
		if t == Numeric || t.IsInteger() {
			return strconv.FormatFloat(d.F, 'f', -1, 64)
		}
		return formatFloat(d.F, t)
	case KindDecimal:
		return d.D.Text('f')
	case KindString:
		return d.S
	case KindDate:
		return time.Unix(d.I*86400, 0).UTC().Format("2006-01-02")
	case KindTimestamp:
		s := d.Time().Format("2006-01-02 15:04:05.999999")
		if t == Timestamptz {
			s += "+00"
		}
		return s
	case KindInterval:
		return formatInterval(d)
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
	i := strings.LastIndexByte(e, 'e')
	exp, _ := strconv.Atoi(e[i+1:])
	if exp < -4 || exp >= maxExp {
		mant, sign, digits := e[:i], e[i+1:i+2], strings.TrimLeft(e[i+2:], "0")
		for len(digits) < 2 {
			digits = "0" + digits
		}
		return mant + "e" + sign + digits
	}
	return strconv.FormatFloat(f, 'f', -1, bits)
}

func formatInterval(d Datum) string {
	var parts []string
	plural := func(n int64, unit string) {
		if n == 0 {
			return
		}
		s := fmt.Sprintf("%d %s", n, unit)
		if n != 1 {
			s += "s"
		}
		parts = append(parts, s)
	}
	plural(int64(d.Months/12), "year")
	plural(int64(d.Months%12), "mon")
	plural(int64(d.Days), "day")
	if d.I != 0 || len(parts) == 0 {
		us := d.I
		sign := ""
		if us < 0 {
			sign = "-"
			us = -us
		}
		h := us / 3600e6
		m := us / 60e6 % 60
		s := us / 1e6 % 60
		frac := us % 1e6
		clock := fmt.Sprintf("%s%02d:%02d:%02d", sign, h, m, s)
		if frac != 0 {
			clock += strings.TrimRight(fmt.Sprintf(".%06d", frac), "0")
		}
		parts = append(parts, clock)
	}
	return strings.Join(parts, " ")
}

// timestampLayouts are the text forms accepted for TIMESTAMP input, besides
// RFC 3339.
var timestampLayouts = []string{
	"2006-01-02 15:04:05.999999999",
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04",
	"2006-01-02",
}

// ParseTimestamp reads 'YYYY-MM-DD[ HH:MM[:SS[.ffffff]]]' and RFC 3339
// strings (with an offset, which is applied). Values without an offset are UTC.
func ParseTimestamp(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t.UTC(), nil
	}
	for _, layout := range []string{"2006-01-02 15:04:05.999999999Z07:00", "2006-01-02 15:04:05.999999999Z07", "2006-01-02 15:04:05.999999999 Z07:00"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), nil
		}
	}
	for _, layout := range timestampLayouts {
		if t, err := time.ParseInLocation(layout, s, time.UTC); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("invalid input syntax for type timestamp: %q", s)
}

// ParseText converts the text form of a value to a Datum of type t, as a
// PostgreSQL input function (or a cast from text) does.
func ParseText(s string, t Type) (Datum, error) {
	switch t {
	case Unknown, Text, Varchar:
		return NewString(s), nil
	case Bool:
		switch strings.ToLower(strings.TrimSpace(s)) {
		case "t", "true", "yes", "y", "on", "1":
			return NewBool(true), nil
		case "f", "false", "no", "n", "off", "0":
			return NewBool(false), nil
		}
		return Null, fmt.Errorf("invalid input syntax for type boolean: %q", s)
	case Int2, Int4, Int8:
		i, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		if err != nil {
			return Null, fmt.Errorf("invalid input syntax for type %s: %q", t, s)
		}
		return CheckIntRange(i, t)
	case Float4, Float8:
		f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil {
			switch strings.ToLower(strings.TrimSpace(s)) {
			case "nan":
				return NewFloat(math.NaN()), nil
			case "infinity", "inf":
				return NewFloat(math.Inf(1)), nil
			case "-infinity", "-inf":
				return NewFloat(math.Inf(-1)), nil
			}
			return Null, fmt.Errorf("invalid input syntax for type %s: %q", t, s)
		}
		if t == Float4 {
			f = float64(float32(f))
		}
		return NewFloat(f), nil
	case Numeric:
		d, _, err := apd.NewFromString(strings.TrimSpace(s))
		if err != nil {
			return Null, fmt.Errorf("invalid input syntax for type numeric: %q", s)
		}
		return NewDecimal(d), nil
	case Date:
		tm, err := time.ParseInLocation("2006-01-02", strings.TrimSpace(s), time.UTC)
		if err != nil {
			if strings.Contains(err.Error(), "out of range") {
				return Null, fmt.Errorf("date/time field value out of range: %q", s)
			}
			return Null, fmt.Errorf("invalid input syntax for type date: %q", s)
		}
		return NewDate(tm.Unix() / 86400), nil
	case Timestamp, Timestamptz:
		tm, err := ParseTimestamp(s)
		if err != nil {
			return Null, err
		}
		return NewTime(tm), nil
	case Interval:
		return ParseInterval(s)
	}
	return Null, fmt.Errorf("cannot convert text to %s", t)
}

// CheckIntRange returns i as a datum of integer type t, or PostgreSQL's
// out-of-range error.
func CheckIntRange(i int64, t Type) (Datum, error) {
	switch t {
	case Int2:
		if i < math.MinInt16 || i > math.MaxInt16 {
			return Null, fmt.Errorf("smallint out of range")
		}
	case Int4:
		if i < math.MinInt32 || i > math.MaxInt32 {
			return Null, fmt.Errorf("integer out of range")
		}
	}
	return NewInt(i), nil
}

var intervalUnits = map[string]struct {
	months, days int32
	micros       int64
}{
	"microsecond": {0, 0, 1}, "millisecond": {0, 0, 1000},
	"second": {0, 0, 1e6}, "sec": {0, 0, 1e6}, "s": {0, 0, 1e6},
	"minute": {0, 0, 60e6}, "min": {0, 0, 60e6}, "m": {0, 0, 60e6},
	"hour": {0, 0, 3600e6}, "h": {0, 0, 3600e6},
	"day": {0, 1, 0}, "d": {0, 1, 0},
	"week": {0, 7, 0}, "w": {0, 7, 0},
	"month": {1, 0, 0}, "mon": {1, 0, 0},
	"year": {12, 0, 0}, "y": {12, 0, 0},
}

// ParseInterval reads PostgreSQL interval text such as '1 hour',
// '2 days 03:00:00', '10 seconds' or '00:00:05'.
func ParseInterval(s string) (Datum, error) {
	fields := strings.Fields(strings.ToLower(s))
	var months, days int32
	var micros int64
	bad := func() (Datum, error) {
		return Null, fmt.Errorf("invalid input syntax for type interval: %q", s)
	}
	if len(fields) == 0 {
		return bad()
	}
	for i := 0; i < len(fields); i++ {
		f := fields[i]
		if strings.Contains(f, ":") {
			us, ok := parseClock(f)
			if !ok {
				return bad()
			}
			micros += us
			continue
		}
		n, err := strconv.ParseFloat(f, 64)
		if err != nil || i+1 >= len(fields) {
			return bad()
		}
		i++
		unit := strings.TrimSuffix(fields[i], "s")
		if unit == "" {
			unit = "s"
		}
		u, ok := intervalUnits[unit]
		if !ok {
			return bad()
		}
		months += int32(n * float64(u.months))
		days += int32(n * float64(u.days))
		micros += int64(n * float64(u.micros))
	}
	return NewInterval(months, days, micros), nil
}

func parseClock(s string) (int64, bool) {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	parts := strings.Split(s, ":")
	if len(parts) < 2 || len(parts) > 3 {
		return 0, false
	}
	var us int64
	mult := []float64{3600e6, 60e6, 1e6}
	for i, p := range parts {
		v, err := strconv.ParseFloat(p, 64)
		if err != nil {
			return 0, false
		}
		us += int64(v * mult[i])
	}
	if neg {
		us = -us
	}
	return us, true
}
