package types

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"streamdb/sqlerr"
)

// Dates and timestamps cover PostgreSQL's range, with its infinities.
//
// A KindTimestamp datum holds microseconds since 1970-01-01 00:00:00 UTC; a
// KindDate datum days since 1970-01-01. PostgreSQL's infinities are kept as
// the sentinels its binary format uses (pgwire passes them through
// unchanged): int64's extremes for timestamps, int32's for dates. Finite
// values run from 4714-11-24 BC (PostgreSQL's lower bound) up to, not
// including, 294247-01-01 for timestamps (a little short of PostgreSQL's
// 294277: microseconds since 1970 in an int64 end there) and 5874898-01-01
// for dates (PostgreSQL's bound). Every value in range prints in
// PostgreSQL's text form (years past 9999 in full, "BC" for years before
// 1, "infinity") and reads back from it exactly, so that rows survive the
// JSON of stream messages and table changelogs and both wire formats.
const (
	TimestampInfinity    int64 = math.MaxInt64
	TimestampNegInfinity int64 = math.MinInt64
	DateInfinity         int64 = math.MaxInt32
	DateNegInfinity      int64 = math.MinInt32

	MinTimestampMicros int64 = -210866803200000000 // 4714-11-24 00:00:00 BC
	EndTimestampMicros int64 = 9223371244800000000 // 294247-01-01 00:00:00 (exclusive)
	MinDateDays        int64 = -2440588            // 4714-11-24 BC
	EndDateDays        int64 = 2145042906          // 5874898-01-01 (exclusive)
)

// TimestampFinite reports whether a timestamp's microseconds are neither
// infinity.
func TimestampFinite(us int64) bool { return us != TimestampInfinity && us != TimestampNegInfinity }

// DateFinite reports whether a date's days are neither infinity.
func DateFinite(days int64) bool { return days != DateInfinity && days != DateNegInfinity }

// ValidTimestamp reports whether us is an infinity or a finite timestamp
// in range.
func ValidTimestamp(us int64) bool {
	return !TimestampFinite(us) || (us >= MinTimestampMicros && us < EndTimestampMicros)
}

// ValidDate reports whether days is an infinity or a finite date in range.
func ValidDate(days int64) bool {
	return !DateFinite(days) || (days >= MinDateDays && days < EndDateDays)
}

// ErrTimestampRange is PostgreSQL's error for a timestamp out of range.
func ErrTimestampRange() error {
	return sqlerr.New(DatetimeFieldOverflow, "timestamp out of range")
}

// ErrDateRange is PostgreSQL's error for a date out of range.
func ErrDateRange() error { return sqlerr.New(DatetimeFieldOverflow, "date out of range") }

// SQLSTATEs of the types' input and range errors that sqlerr does not name.
const (
	DatetimeFieldOverflow    = "22008"
	InvalidDatetimeFormat    = "22007"
	IntervalFieldOverflow    = "22015"
	CharacterNotInRepertoire = "22021"
)

// CheckTimestamp returns us as a timestamp datum, or 22008 if it is out of
// range.
func CheckTimestamp(us int64) (Datum, error) {
	if !ValidTimestamp(us) {
		return Null, ErrTimestampRange()
	}
	return NewTimestampMicros(us), nil
}

// CheckDate returns days as a date datum, or 22008 if it is out of range.
func CheckDate(days int64) (Datum, error) {
	if !ValidDate(days) {
		return Null, ErrDateRange()
	}
	return NewDate(days), nil
}

// FromTime returns t as a timestamp datum, or 22008 if it is out of range
// (checked on the time itself: UnixMicro of a time beyond int64's
// microseconds wraps).
func FromTime(t time.Time) (Datum, error) {
	if t.Before(minTimestampTime) || !t.Before(endTimestampTime) {
		return Null, ErrTimestampRange()
	}
	return NewTimestampMicros(t.UnixMicro()), nil
}

var (
	minTimestampTime = time.UnixMicro(MinTimestampMicros).UTC()
	endTimestampTime = time.UnixMicro(EndTimestampMicros).UTC()
)

// appendYMD appends a date as PostgreSQL prints it (ISO DateStyle): at least
// four digits of year, and the era after everything else (the caller
// appends " BC" when bc is true).
func appendYMD(b []byte, t time.Time) (out []byte, bc bool) {
	y, m, d := t.Date()
	if y <= 0 {
		y, bc = 1-y, true
	}
	if y < 1000 {
		b = append(b, "000"[:4-digits(y)]...)
	}
	b = strconv.AppendInt(b, int64(y), 10)
	b = append(b, '-', byte('0'+m/10), byte('0'+m%10), '-', byte('0'+d/10), byte('0'+d%10))
	return b, bc
}

func digits(n int) int {
	k := 1
	for n >= 10 {
		n /= 10
		k++
	}
	return k
}

// formatDate renders a KindDate datum's days.
func formatDate(days int64) string {
	switch days {
	case DateInfinity:
		return "infinity"
	case DateNegInfinity:
		return "-infinity"
	}
	b, bc := appendYMD(make([]byte, 0, 16), time.Unix(days*86400, 0).UTC())
	if bc {
		b = append(b, " BC"...)
	}
	return string(b)
}

// formatTimestamp renders a KindTimestamp datum's microseconds.
func formatTimestamp(us int64, tz bool) string {
	switch us {
	case TimestampInfinity:
		return "infinity"
	case TimestampNegInfinity:
		return "-infinity"
	}
	t := time.UnixMicro(us).UTC()
	b, bc := appendYMD(make([]byte, 0, 40), t)
	h, mi, s := t.Clock()
	b = append(b, ' ', byte('0'+h/10), byte('0'+h%10), ':', byte('0'+mi/10), byte('0'+mi%10), ':', byte('0'+s/10), byte('0'+s%10))
	if frac := t.Nanosecond() / 1000; frac != 0 {
		f := fmt.Sprintf(".%06d", frac)
		b = append(b, strings.TrimRight(f, "0")...)
	}
	if tz {
		b = append(b, "+00"...)
	}
	if bc {
		b = append(b, " BC"...)
	}
	return string(b)
}

// dateTimeRE matches the date and timestamp text this package reads beyond
// what time.Parse does: any number of year digits, one- or two-digit
// months and days, an optional time with fractional seconds, an optional
// UTC offset, and an optional era.
var dateTimeRE = regexp.MustCompile(`^(?i)(\d{1,})-(\d{1,2})-(\d{1,2})(?:(?:[ T]|\s+)(\d{1,2}):(\d{1,2})(?::(\d{1,2})(\.\d*)?)?)?\s*(z|[+-]\d{1,2}(?::?\d{2}(?::?\d{2})?)?)?(?:\s*(bc|ad))?$`)

// parsedDateTime is a timestamp read from text: the time (UTC, the offset
// applied) and its microseconds.
type parsedDateTime struct {
	us       int64 // microseconds since 1970, offset applied
	days     int64 // the date as written (for date input)
	infinity int   // +1, -1 for the infinities
}

// parseDateTime reads timestamp or date text in the forms this package
// supports. kind names the type in errors.
func parseDateTime(s, kind string) (parsedDateTime, error) {
	s = strings.TrimSpace(s)
	switch strings.ToLower(s) {
	case "infinity", "+infinity":
		return parsedDateTime{infinity: 1}, nil
	case "-infinity":
		return parsedDateTime{infinity: -1}, nil
	case "epoch":
		return parsedDateTime{}, nil
	}
	bad := func() (parsedDateTime, error) {
		return parsedDateTime{}, sqlerr.New(InvalidDatetimeFormat, "invalid input syntax for type %s: %q", kind, s)
	}
	overflow := func() (parsedDateTime, error) {
		return parsedDateTime{}, sqlerr.New(DatetimeFieldOverflow, "date/time field value out of range: %q", s)
	}
	var t time.Time
	var err error
	parsed := false
	if t, err = time.Parse(time.RFC3339Nano, s); err == nil {
		parsed = true
	} else {
		for _, layout := range timestampLayouts {
			if t, err = time.Parse(layout, s); err == nil {
				parsed = true
				break
			}
		}
	}
	if parsed {
		y, m, d := t.Date()
		if y <= 0 {
			return overflow() // PostgreSQL has no year 0: 1 BC precedes 1 AD
		}
		days := time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Unix() / 86400
		t = t.UTC()
		return parsedDateTime{us: roundMicros(t), days: days}, nil
	}
	if strings.Contains(err.Error(), "out of range") {
		return overflow()
	}
	g := dateTimeRE.FindStringSubmatch(s)
	if g == nil {
		return bad()
	}
	num := func(x string) int {
		if len(x) > 9 {
			return math.MaxInt32
		}
		n, _ := strconv.Atoi(x)
		return n
	}
	year, month, day := num(g[1]), num(g[2]), num(g[3])
	hour, minute, sec := num(g[4]), num(g[5]), num(g[6])
	if strings.EqualFold(g[9], "bc") {
		if year == 0 {
			return overflow()
		}
		year = 1 - year
	}
	if year > 6000000 || month < 1 || month > 12 || day < 1 || day > daysIn(time.Month(month), year) ||
		hour > 24 || minute > 59 || sec > 60 || (hour == 24 && (minute != 0 || sec != 0)) {
		return overflow()
	}
	if !strings.EqualFold(g[9], "bc") && year == 0 {
		return overflow()
	}
	nanos := 0
	if f := g[7]; len(f) > 1 {
		f = (f[1:] + "000000000")[:9]
		nanos = num(f)
	}
	offset := 0
	if z := g[8]; z != "" && !strings.EqualFold(z, "z") {
		sign := 1
		if z[0] == '-' {
			sign = -1
		}
		z = strings.ReplaceAll(z[1:], ":", "")
		switch len(z) {
		case 1, 2:
			offset = num(z) * 3600
		case 3, 4:
			offset = num(z[:len(z)-2])*3600 + num(z[len(z)-2:])*60
		case 5, 6:
			offset = num(z[:len(z)-4])*3600 + num(z[len(z)-4:len(z)-2])*60 + num(z[len(z)-2:])
		default:
			return bad()
		}
		if offset > 15*3600+59*60+59 {
			return bad()
		}
		offset *= sign
	}
	days := time.Date(year, time.Month(month), day, 0, 0, 0, 0, time.UTC).Unix() / 86400
	t = time.Date(year, time.Month(month), day, hour, minute, sec, nanos, time.UTC).Add(-time.Duration(offset) * time.Second)
	if t.Before(minTimestampTime) || !t.Before(endTimestampTime) {
		// Only a date can be this far out; callers check their range.
		return parsedDateTime{us: TimestampInfinity - 1, days: days}, nil
	}
	return parsedDateTime{us: roundMicros(t), days: days}, nil
}

// roundMicros returns t's microseconds since 1970, rounded to the nearest
// (PostgreSQL rounds fractional seconds to microseconds; it does not
// truncate).
func roundMicros(t time.Time) int64 {
	us := t.UnixMicro()
	if t.Nanosecond()%1000 >= 500 {
		us++
	}
	return us
}

func daysIn(m time.Month, year int) int {
	return time.Date(year, m+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

// parseTimestampDatum is ParseText for TIMESTAMP and TIMESTAMPTZ.
func parseTimestampDatum(s string, t Type) (Datum, error) {
	p, err := parseDateTime(s, t.String())
	if err != nil {
		return Null, err
	}
	switch p.infinity {
	case 1:
		return NewTimestampMicros(TimestampInfinity), nil
	case -1:
		return NewTimestampMicros(TimestampNegInfinity), nil
	}
	if p.us < MinTimestampMicros || p.us >= EndTimestampMicros {
		return Null, sqlerr.New(DatetimeFieldOverflow, "timestamp out of range: %q", strings.TrimSpace(s))
	}
	return NewTimestampMicros(p.us), nil
}

// parseDateDatum is ParseText for DATE: a date, or a timestamp whose date
// part is taken (as PostgreSQL's date input does).
func parseDateDatum(s string) (Datum, error) {
	p, err := parseDateTime(s, "date")
	if err != nil {
		return Null, err
	}
	switch p.infinity {
	case 1:
		return NewDate(DateInfinity), nil
	case -1:
		return NewDate(DateNegInfinity), nil
	}
	if p.days < MinDateDays || p.days >= EndDateDays {
		return Null, sqlerr.New(DatetimeFieldOverflow, "date out of range: %q", strings.TrimSpace(s))
	}
	return NewDate(p.days), nil
}
