package types

import (
	"strconv"

	"streamdb/sqlerr"
)

// Time of day: PostgreSQL's time [without time zone] and time with time
// zone (timetz).
//
// A KindTime datum holds microseconds since midnight in I, from 0 up to
// and including 24:00:00 (UsecsPerDay), as PostgreSQL allows. A KindTimeTZ
// datum holds the same in I and, in Days, the zone's offset in seconds
// WEST of UTC, PostgreSQL's sign convention (12:00+02 has zone -7200): its
// binary wire format sends it that way. The offset is part of the value:
// 12:00+02 and 11:00+01 are the same instant but not equal (see
// CompareTimeTZ).
const (
	UsecsPerDay int64 = 86400e6
	// MaxTimePrecision is the largest time(p) PostgreSQL has.
	MaxTimePrecision = 6
	// TZDispLimit bounds a timetz's zone, in seconds: PostgreSQL's
	// TZDISP_LIMIT, 16 hours, which a zone must stay below.
	TZDispLimit = 16 * 3600
)

// NewTimeOfDay returns a time datum of us microseconds since midnight.
func NewTimeOfDay(us int64) Datum { return Datum{K: KindTime, I: us} }

// NewTimeTZ returns a timetz datum: us microseconds since midnight local
// to a zone zone seconds west of UTC.
func NewTimeTZ(us int64, zone int32) Datum { return Datum{K: KindTimeTZ, I: us, Days: zone} }

// Zone is a KindTimeTZ datum's offset in seconds west of UTC.
func (d Datum) Zone() int32 { return d.Days }

// CompareTimeTZ orders timetz values as PostgreSQL's timetz_cmp: by the
// instant in UTC, then by zone (values of the same instant in different
// zones are not equal).
func CompareTimeTZ(a, b Datum) int {
	ua, ub := a.I+int64(a.Days)*1e6, b.I+int64(b.Days)*1e6
	switch {
	case ua < ub:
		return -1
	case ua > ub:
		return 1
	case a.Days < b.Days:
		return -1
	case a.Days > b.Days:
		return 1
	}
	return 0
}

// ValidTimeOfDay reports whether us is a time of day PostgreSQL accepts
// (00:00:00 through 24:00:00).
func ValidTimeOfDay(us int64) bool { return us >= 0 && us <= UsecsPerDay }

// ValidZone reports whether zone (seconds west) is a displacement
// PostgreSQL's timetz accepts.
func ValidZone(zone int64) bool { return zone > -TZDispLimit && zone < TZDispLimit }

// ErrTimeRange is PostgreSQL's error for a time of day out of range.
func ErrTimeRange() error { return sqlerr.New(sqlerr.DatetimeFieldOverflow, "time out of range") }

// RoundTime rounds microseconds of a time to precision p fractional
// digits, half away from zero, as PostgreSQL's AdjustTimeForTypmod (so
// 23:59:59.9 in time(0) is 24:00:00). p outside 0..5 leaves us as it is.
func RoundTime(us int64, p int) int64 {
	if p < 0 || p >= MaxTimePrecision {
		return us
	}
	scale := int64(1)
	for i := p; i < MaxTimePrecision; i++ {
		scale *= 10
	}
	if us >= 0 {
		return (us + scale/2) / scale * scale
	}
	return -((-us + scale/2) / scale * scale)
}

// appendTimeOfDay appends microseconds since midnight as PostgreSQL's
// time output: HH:MM:SS with the fraction's trailing zeros dropped.
func appendTimeOfDay(b []byte, us int64) []byte {
	h, m, s, frac := us/3600e6, us/60e6%60, us/1e6%60, us%1e6
	b = append(b, byte('0'+h/10), byte('0'+h%10), ':', byte('0'+m/10), byte('0'+m%10), ':', byte('0'+s/10), byte('0'+s%10))
	if frac != 0 {
		f := strconv.AppendInt(nil, frac+1e6, 10) // "1" then six digits
		n := len(f)
		for f[n-1] == '0' {
			n--
		}
		b = append(append(b, '.'), f[1:n]...)
	}
	return b
}

// AppendZone appends a zone offset (seconds west of UTC) as PostgreSQL
// prints it: +hh, +hh:mm or +hh:mm:ss, east positive.
func AppendZone(b []byte, zone int64) []byte {
	sign := byte('+')
	if zone > 0 {
		sign = '-'
	}
	sec := zone
	if sec < 0 {
		sec = -sec
	}
	h, m, s := sec/3600, sec/60%60, sec%60
	two := func(b []byte, v int64) []byte {
		if v < 10 {
			b = append(b, '0')
		}
		return strconv.AppendInt(b, v, 10)
	}
	b = two(append(b, sign), h)
	if m != 0 || s != 0 {
		b = two(append(b, ':'), m)
	}
	if s != 0 {
		b = two(append(b, ':'), s)
	}
	return b
}

func formatTime(d Datum) string {
	b := appendTimeOfDay(make([]byte, 0, 24), d.I)
	if d.K == KindTimeTZ {
		b = AppendZone(b, int64(d.Days))
	}
	return string(b)
}

// parseTimeDatum is ParseText for time and timetz, as PostgreSQL's time_in
// and timetz_in: a zone given to time is read and dropped; timetz without
// one takes the session's (UTC).
func parseTimeDatum(s string, t Type) (Datum, error) {
	fields, e := splitDateTime(s, dateTimeBufSize)
	var r dtResult
	if e == dtOK {
		r, e = decodeTimeOnly(fields, nowFunc)
	}
	if e != dtOK {
		return Null, dateTimeError(e, s, inputTypeName(t), r.badZone)
	}
	us := ((int64(r.tm.hour)*60+int64(r.tm.min))*60+int64(r.tm.sec))*1e6 + r.tm.fsec
	if t == TimeTZ {
		return NewTimeTZ(us, int32(r.tz)), nil
	}
	return NewTimeOfDay(us), nil
}
