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
// A KindTimestamp datum holds microseconds since 2000-01-01 00:00:00 UTC,
// PostgreSQL's own epoch and its binary wire format; a KindDate datum
// days since 1970-01-01. PostgreSQL's infinities are kept as the
// sentinels its binary format uses (pgwire passes them through
// unchanged): int64's extremes for timestamps, int32's for dates. Finite
// values run from 4714-11-24 BC (PostgreSQL's lower bound) up to, not
// including, 294277-01-01 for timestamps and 5874898-01-01 for dates
// (PostgreSQL's bounds). Every value in range prints in PostgreSQL's text
// form (years past 9999 in full, "BC" for years before 1, "infinity") and
// reads back from it exactly, so that rows survive the JSON of stream
// messages and table changelogs and both wire formats.
//
// Stored forms written before the epoch was 2000 (keyenc keys and values,
// watermark state, plan records) count microseconds from 1970, which
// int64 holds only up to 294247-01-01: their codecs keep that form for
// every value it can hold, so old data reads back exactly and new data
// with such values is byte for byte what it was, and give the thirty
// years after it a form of their own (UnixMicros, FromUnixMicros).
const (
	TimestampInfinity    int64 = math.MaxInt64
	TimestampNegInfinity int64 = math.MinInt64
	DateInfinity         int64 = math.MaxInt32
	DateNegInfinity      int64 = math.MinInt32

	MinTimestampMicros int64 = -211813488000000000 // 4714-11-24 00:00:00 BC
	EndTimestampMicros int64 = 9223371331200000000 // 294277-01-01 00:00:00 (exclusive)
	MinDateDays        int64 = -2440588            // 4714-11-24 BC
	EndDateDays        int64 = 2145042906          // 5874898-01-01 (exclusive)

	// UnixEpochMicros is 1970-01-01 00:00:00 as a timestamp datum;
	// PostgresEpochDays is 2000-01-01 as a date datum.
	UnixEpochMicros   int64 = -946684800000000
	PostgresEpochDays int64 = 10957

	// EndUnixMicros is where microseconds since 1970 end in an int64:
	// 294247-01-01 00:00:00 as a timestamp datum. Values from it on
	// have no form in microseconds since 1970 (UnixMicros).
	EndUnixMicros int64 = 9223371244800000000 + UnixEpochMicros
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

// UnixMicros returns a timestamp datum's microseconds (us) as
// microseconds since 1970, the infinities as they are; ok is false for
// values that have no such form in an int64 (EndUnixMicros and later).
func UnixMicros(us int64) (unix int64, ok bool) {
	switch {
	case !TimestampFinite(us):
		return us, true
	case us >= EndUnixMicros:
		return 0, false
	}
	return us - UnixEpochMicros, true
}

// FromUnixMicros is the inverse of UnixMicros: a timestamp datum's
// microseconds from microseconds since 1970; ok is false where there is
// no such datum (past int64's greatest, and the infinities' neighbours).
func FromUnixMicros(unix int64) (us int64, ok bool) {
	switch {
	case !TimestampFinite(unix):
		return unix, true
	case unix <= math.MinInt64-UnixEpochMicros:
		return 0, false
	}
	return unix + UnixEpochMicros, true
}

// TimeOfMicros returns a finite timestamp datum's microseconds as a UTC
// time.
func TimeOfMicros(us int64) time.Time {
	sec, rest := floorDiv(us, 1e6), us-floorDiv(us, 1e6)*1e6
	return time.Unix(sec-UnixEpochMicros/1e6, rest*1000).UTC()
}

// MicrosOfTime returns t as a timestamp datum's microseconds, for t
// within int64's microseconds of 2000-01-01 (FromTime checks the range).
func MicrosOfTime(t time.Time) int64 {
	return (t.Unix()+UnixEpochMicros/1e6)*1e6 + int64(t.Nanosecond()/1000)
}

// TimestampOfDays returns the start of a finite date (days since 1970) as
// a timestamp datum's microseconds, for dates whose start is in the
// timestamp range (callers check: later dates overflow int64).
func TimestampOfDays(days int64) int64 { return (days - PostgresEpochDays) * 86400e6 }

// DaysOfTimestamp returns the date (days since 1970) a finite timestamp
// datum's microseconds fall on.
func DaysOfTimestamp(us int64) int64 { return floorDiv(us, 86400e6) + PostgresEpochDays }

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
	return NewTimestamp2000(us), nil
}

// CheckDate returns days as a date datum, or 22008 if it is out of range.
func CheckDate(days int64) (Datum, error) {
	if !ValidDate(days) {
		return Null, ErrDateRange()
	}
	return NewDate(days), nil
}

// FromTime returns t as a timestamp datum, or 22008 if it is out of range
// (checked on the time itself, before its microseconds are counted).
func FromTime(t time.Time) (Datum, error) {
	if t.Before(minTimestampTime) || !t.Before(endTimestampTime) {
		return Null, ErrTimestampRange()
	}
	return NewTimestamp2000(MicrosOfTime(t)), nil
}

var (
	minTimestampTime = TimeOfMicros(MinTimestampMicros)
	endTimestampTime = TimeOfMicros(EndTimestampMicros)
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
	t := TimeOfMicros(us)
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
