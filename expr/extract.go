package expr

import (
	"math"
	"time"

	"github.com/cockroachdb/apd/v3"

	"streamdb/sqlerr"
	"streamdb/types"
)

// Field extraction (extract, date_part) and date_trunc as PostgreSQL 15
// computes them. extract returns numeric with PostgreSQL's scales (second
// and epoch 6 digits, milliseconds 3); date_part returns the same value
// as double precision. Years are astronomical in time.Time (1 BC is 0).

// monotonic fields of an infinite timestamp are ±Infinity; the others NULL.
var monotonicFields = map[string]bool{
	"year": true, "decade": true, "century": true, "millennium": true, "epoch": true, "isoyear": true, "julian": true,
}

// timeField is one extracted value: v scaled by 10^-scale.
type timeField struct {
	v     int64
	scale int32
	// subSecond marks v as a seconds field in microseconds (scale 3 for
	// milliseconds, 6 for seconds), which date_part computes in float8
	// as PostgreSQL does: seconds plus the fraction, each part converted
	// on its own (31.197044 s is 31 + 0.197044 = 31.197043999999998).
	subSecond bool
}

// secondsField is the seconds (scale 6) or milliseconds (scale 3) of a
// field of us microseconds within a minute.
func secondsField(us int64, scale int32) timeField {
	return timeField{v: us, scale: scale, subSecond: true}
}

func (f timeField) datum(numeric bool) types.Datum {
	if numeric {
		return types.NewDecimal(apd.New(f.v, -f.scale))
	}
	if f.subSecond {
		sec, fsec := float64(f.v/1e6), float64(f.v%1e6)
		if f.scale == 3 {
			return types.NewFloat(sec*1000.0 + fsec/1000.0)
		}
		return types.NewFloat(sec + fsec/1000000.0)
	}
	return types.NewFloat(float64(f.v) / math.Pow10(int(f.scale)))
}

func canonicalUnit(unit string) string {
	if a, ok := unitAliases[unit]; ok {
		return a
	}
	return unit
}

// signedYear is PostgreSQL's year field: 1 BC is -1.
func signedYear(y int) int64 {
	if y > 0 {
		return int64(y)
	}
	return int64(y) - 1
}

// extractTime extracts a field of a timestamp (a datum's microseconds) or, with
// isDate, of a date given as its midnight; typeName names the type in
// errors.
func extractTime(unit string, us int64, finite bool, isDate, numeric bool, typeName string) (types.Datum, error) {
	return extractAt(unit, us, types.TimeOfMicros(us), floorDiv(us, 1e6)-types.UnixEpochMicros/1e6, finite, isDate, numeric, typeName)
}

// extractDate extracts a field of a date (days since 1970) from its
// calendar day, not its midnight's microseconds, which overflow past
// timestamp's range (a date reaches 5874897 AD).
func extractDate(unit string, days int64) (types.Datum, error) {
	finite := types.DateFinite(days)
	sign := map[bool]int64{true: 1, false: -1}[days > 0] // an infinity's sign
	return extractAt(unit, sign, time.Unix(days*86400, 0).UTC(), days*86400, finite, true, true, "date")
}

// extractAt is extractTime given the value's calendar time t and, for a
// date, its seconds since 1970; us is the timestamp's microseconds (for
// a date only an infinity's sign).
func extractAt(unit string, us int64, t time.Time, dateEpoch int64, finite bool, isDate, numeric bool, typeName string) (types.Datum, error) {
	unit = canonicalUnit(unit)
	known := map[string]bool{"microseconds": true, "milliseconds": true, "second": true, "minute": true,
		"hour": true, "day": true, "month": true, "quarter": true, "year": true, "decade": true, "century": true,
		"millennium": true, "dow": true, "isodow": true, "doy": true, "week": true, "isoyear": true, "epoch": true}
	if !known[unit] {
		return types.Null, sqlerr.New(sqlerr.InvalidParameterValue, "unit %q not recognized for type %s", unit, typeName)
	}
	if isDate && numeric {
		switch unit {
		case "microseconds", "milliseconds", "second", "minute", "hour":
			return types.Null, sqlerr.New(sqlerr.FeatureNotSupported, "unit %q not supported for type date", unit)
		}
	}
	if !finite {
		if !monotonicFields[unit] {
			return types.Null, nil
		}
		if numeric {
			return types.NewDecimal(&apd.Decimal{Form: apd.Infinite, Negative: us < 0}), nil
		}
		return types.NewFloat(math.Inf(int(max(-1, min(1, us))))), nil
	}
	y := t.Year()
	secUs := int64(t.Second())*1e6 + int64(t.Nanosecond()/1000)
	var f timeField
	switch unit {
	case "microseconds":
		f = timeField{v: secUs}
	case "milliseconds":
		f = secondsField(secUs, 3)
	case "second":
		f = secondsField(secUs, 6)
	case "minute":
		f.v = int64(t.Minute())
	case "hour":
		f.v = int64(t.Hour())
	case "day":
		f.v = int64(t.Day())
	case "month":
		f.v = int64(t.Month())
	case "quarter":
		f.v = int64((int(t.Month())-1)/3 + 1)
	case "year":
		f.v = signedYear(y)
	case "decade":
		if y >= 0 {
			f.v = int64(y / 10)
		} else {
			f.v = -int64((8 - (y - 1)) / 10)
		}
	case "century":
		if y > 0 {
			f.v = int64((y + 99) / 100)
		} else {
			f.v = -int64((99 - (y - 1)) / 100)
		}
	case "millennium":
		if y > 0 {
			f.v = int64((y + 999) / 1000)
		} else {
			f.v = -int64((999 - (y - 1)) / 1000)
		}
	case "dow":
		f.v = int64(t.Weekday())
	case "isodow":
		f.v = int64((int(t.Weekday())+6)%7 + 1)
	case "doy":
		f.v = int64(t.YearDay())
	case "week":
		_, w := t.ISOWeek()
		f.v = int64(w)
	case "isoyear":
		iy, _ := t.ISOWeek()
		f.v = int64(iy)
		if f.v <= 0 {
			f.v--
		}
	case "epoch":
		switch {
		case isDate && numeric:
			f.v = dateEpoch // a date's epoch is whole seconds
		case us < math.MaxInt64+types.UnixEpochMicros:
			f = timeField{v: us - types.UnixEpochMicros, scale: 6}
		case numeric:
			// Past int64's microseconds since 1970 (294247-01-10 on)
			// PostgreSQL divides numerics, whose quotient
			// keeps 16 significant digits, four decimals at these
			// magnitudes (select_div_scale), then shows six.
			var d, e apd.Decimal
			d.SetFinite(us, -6)
			e.SetFinite(-types.UnixEpochMicros, -6)
			exactCtx.Add(&d, &d, &e)
			half := apd.BaseContext.WithPrecision(40)
			half.Rounding = apd.RoundHalfUp
			half.Quantize(&d, &d, -4)
			half.Quantize(&d, &d, -6)
			return types.NewDecimal(&d), nil
		default:
			return types.NewFloat((float64(us) - float64(types.UnixEpochMicros)) / 1e6), nil
		}
	}
	return f.datum(numeric), nil
}

// extractInterval extracts a field of an interval.
func extractInterval(unit string, iv types.Datum, numeric bool) (types.Datum, error) {
	unit = canonicalUnit(unit)
	us := iv.I
	years, mons := int64(iv.Months/12), int64(iv.Months%12)
	var f timeField
	switch unit {
	case "microseconds":
		f = timeField{v: us % 60e6}
	case "milliseconds":
		f = secondsField(us%60e6, 3)
	case "second":
		f = secondsField(us%60e6, 6)
	case "minute":
		f.v = us / 60e6 % 60
	case "hour":
		f.v = us / 3600e6
	case "day":
		f.v = int64(iv.Days)
	case "month":
		f.v = mons
	case "quarter":
		f.v = mons/3 + 1
	case "year":
		f.v = years
	case "decade":
		f.v = years / 10
	case "century":
		f.v = years / 100
	case "millennium":
		f.v = years / 1000
	case "epoch":
		// A year is 365.25 days and a month 30 (PostgreSQL's DAYS_PER_YEAR
		// and DAYS_PER_MONTH), computed in quarter days to stay integral.
		secs := (1461*years + 120*mons + 4*int64(iv.Days)) * (86400 / 4)
		if !numeric {
			return types.NewFloat(float64(us)/1e6 + float64(secs)), nil
		}
		var d, frac apd.Decimal
		d.SetInt64(secs)
		frac.SetFinite(us, -6)
		exactCtx.Add(&d, &d, &frac)
		return types.NewDecimal(&d), nil
	case "dow", "isodow", "doy", "week", "isoyear":
		return types.Null, sqlerr.New(sqlerr.FeatureNotSupported, "unit %q not supported for type interval", unit)
	default:
		return types.Null, sqlerr.New(sqlerr.InvalidParameterValue, "unit %q not recognized for type interval", unit)
	}
	return f.datum(numeric), nil
}

// truncTimestamp is date_trunc over a timestamp in microseconds;
// infinities are returned unchanged.
func truncTimestamp(unit string, us int64) (types.Datum, error) {
	unit = canonicalUnit(unit)
	if !types.TimestampFinite(us) {
		if _, err := truncTime(unit, time.Time{}); err != nil {
			return types.Null, err
		}
		return types.NewTimestamp2000(us), nil
	}
	t, err := truncTime(unit, types.TimeOfMicros(us))
	if err != nil {
		return types.Null, err
	}
	out := types.MicrosOfTime(t)
	if out < types.MinTimestampMicros {
		// Truncating a value of 4714 BC can land before the first
		// timestamp, 4714-11-24 BC, which PostgreSQL refuses.
		return types.Null, types.ErrTimestampRange()
	}
	return types.NewTimestamp2000(out), nil
}
