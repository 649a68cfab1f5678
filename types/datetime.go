package types

import (
	"fmt"
	"math"
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
	return sqlerr.New(sqlerr.DatetimeFieldOverflow, "timestamp out of range")
}

// ErrDateRange is PostgreSQL's error for a date out of range.
func ErrDateRange() error { return sqlerr.New(sqlerr.DatetimeFieldOverflow, "date out of range") }

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
