package types

import (
	"math"
	"strconv"
	"strings"

	"streamdb/sqlerr"
)

// Interval input as PostgreSQL 15's interval_in reads it: PostgreSQL's
// own style ('1 year 2 mons -3 days +04:05:06', '@ 1 hour ago', '1.5
// months' = 1 mon 15 days), SQL's ('1-2', '3 4:05:06') and ISO 8601's
// ('P1Y2M3DT4H5M6S', 'P0001-02-03T04:05:06', 'PT1.5S').

// itmIn is an interval being read: each part kept apart, with the
// overflow checks of PostgreSQL's pg_itm_in (years, months and days are
// C ints, microseconds int64).
type itmIn struct {
	usec             int64
	mday, mon, years int32
}

// intervalUnits are the words of interval input (PostgreSQL's
// deltatktbl), compared on their first 10 characters.
var intervalWords = map[string]keyword{
	"@": {kwIgnore, 0}, "ago": {kwAgo, 0},
	"c": {kwUnits, unitCentury}, "cent": {kwUnits, unitCentury}, "centuries": {kwUnits, unitCentury}, "century": {kwUnits, unitCentury},
	"d": {kwUnits, unitDay}, "day": {kwUnits, unitDay}, "days": {kwUnits, unitDay},
	"dec": {kwUnits, unitDecade}, "decade": {kwUnits, unitDecade}, "decades": {kwUnits, unitDecade}, "decs": {kwUnits, unitDecade},
	"h": {kwUnits, unitHour}, "hour": {kwUnits, unitHour}, "hours": {kwUnits, unitHour}, "hr": {kwUnits, unitHour}, "hrs": {kwUnits, unitHour},
	"m": {kwUnits, unitMinute}, "microsecon": {kwUnits, unitMicrosec},
	"mil": {kwUnits, unitMillennium}, "millennia": {kwUnits, unitMillennium}, "millennium": {kwUnits, unitMillennium},
	"millisecon": {kwUnits, unitMillisec}, "mils": {kwUnits, unitMillennium},
	"min": {kwUnits, unitMinute}, "mins": {kwUnits, unitMinute}, "minute": {kwUnits, unitMinute}, "minutes": {kwUnits, unitMinute},
	"mon": {kwUnits, unitMonth}, "mons": {kwUnits, unitMonth}, "month": {kwUnits, unitMonth}, "months": {kwUnits, unitMonth},
	"ms": {kwUnits, unitMillisec}, "msec": {kwUnits, unitMillisec}, "mseconds": {kwUnits, unitMillisec}, "msecs": {kwUnits, unitMillisec},
	"qtr": {kwUnits, unitOther}, "quarter": {kwUnits, unitOther},
	"s": {kwUnits, unitSecond}, "sec": {kwUnits, unitSecond}, "second": {kwUnits, unitSecond}, "seconds": {kwUnits, unitSecond}, "secs": {kwUnits, unitSecond},
	"timezone": {kwUnits, unitOther}, "timezone_h": {kwUnits, unitOther}, "timezone_m": {kwUnits, unitOther},
	"us": {kwUnits, unitMicrosec}, "usec": {kwUnits, unitMicrosec}, "useconds": {kwUnits, unitMicrosec}, "usecs": {kwUnits, unitMicrosec},
	"w": {kwUnits, unitWeek}, "week": {kwUnits, unitWeek}, "weeks": {kwUnits, unitWeek},
	"y": {kwUnits, unitYear}, "year": {kwUnits, unitYear}, "years": {kwUnits, unitYear}, "yr": {kwUnits, unitYear}, "yrs": {kwUnits, unitYear},
}

// ParseInterval reads interval text as PostgreSQL's interval_in does. A
// value too large for a field is 22015, text that is no interval 22007.
// The text this package prints for every interval also reads back, even
// where PostgreSQL cannot read its own output (a time part beyond
// ±2562047788 hours).
func ParseInterval(s string) (Datum, error) {
	var itm itmIn
	fields, e := splitDateTime(s, intervalBufSize)
	if e == dtOK {
		e = decodeInterval(fields, &itm)
	}
	if e == dtBadFormat {
		itm = itmIn{}
		e = decodeISO8601Interval(s, &itm)
	}
	if e != dtOK {
		if d, err := parseIntervalOutput(s); err == nil && formatInterval(d) == s {
			return d, nil
		}
		if e == dtFieldOverflow {
			return Null, sqlerr.New(sqlerr.IntervalFieldOverflow, "interval field value out of range: \"%s\"", s)
		}
		return Null, dateTimeError(e, s, "interval", "")
	}
	months := int64(itm.years)*12 + int64(itm.mon)
	if months < math.MinInt32 || months > math.MaxInt32 {
		return Null, sqlerr.New(sqlerr.DatetimeFieldOverflow, "interval out of range")
	}
	return NewInterval(int32(months), itm.mday, itm.usec), nil
}

// decodeInterval reads the fields of PostgreSQL-style interval text from
// right to left, so that units are seen before their numbers (PostgreSQL's
// DecodeInterval, IntervalStyle postgres, no typmod range).
func decodeInterval(fields []dtField, itm *itmIn) dtErr {
	fmask, tmask := 0, 0
	typ := 0 // the unit of the number to come; 0 for none yet
	isBefore := false
	for i := len(fields) - 1; i >= 0; i-- {
		f := fields[i]
		switch f.typ {
		case fieldTime:
			var e dtErr
			if tmask, e = decodeTimeForInterval(f.s, itm); e != dtOK {
				return e
			}
			typ = unitDay
		case fieldTZ, fieldDate, fieldNumber:
			if f.typ == fieldTZ && strings.IndexByte(f.s[1:], ':') >= 0 {
				// A signed hh:mm[:ss].
				var saved = *itm
				if m, e := decodeTimeForInterval(f.s[1:], itm); e == dtOK {
					if f.s[0] == '-' {
						if itm.usec == math.MinInt64 {
							return dtFieldOverflow
						}
						itm.usec = -itm.usec
					}
					tmask = m
					typ = unitDay
					break
				}
				*itm = saved
			}
			if typ == 0 {
				typ = unitSecond
			}
			val, cp, of := strtol(f.s, 64)
			if of {
				return dtFieldOverflow
			}
			var fval float64
			switch {
			case strings.HasPrefix(cp, "-"):
				// SQL "years-months".
				v2, rest, of2 := strtol(cp[1:], 32)
				if of2 || v2 < 0 || v2 >= 12 {
					return dtFieldOverflow
				}
				if rest != "" {
					return dtBadFormat
				}
				typ = unitMonth
				if f.s[0] == '-' {
					v2 = -v2
				}
				m, ok := mulAdd64(val, 12, v2)
				if !ok {
					return dtFieldOverflow
				}
				val = m
			case strings.HasPrefix(cp, "."):
				var e dtErr
				if fval, e = parseFraction(cp); e != dtOK {
					return e
				}
				if f.s[0] == '-' {
					fval = -fval
				}
			case cp == "":
			default:
				return dtBadFormat
			}
			ok := true
			switch typ {
			case unitMicrosec:
				ok, tmask = itm.adjustMicroseconds(val, fval, 1), mMicrosecond
			case unitMillisec:
				ok, tmask = itm.adjustMicroseconds(val, fval, 1000), mMillisecond
			case unitSecond:
				ok, tmask = itm.adjustMicroseconds(val, fval, 1e6), mSecond
				if fval != 0 {
					tmask = mAllSecs
				}
			case unitMinute:
				ok, tmask = itm.adjustMicroseconds(val, fval, 60e6), mMinute
			case unitHour:
				ok, tmask = itm.adjustMicroseconds(val, fval, 3600e6), mHour
				typ = unitDay
			case unitDay:
				ok, tmask = itm.adjustDays(val, 1) && itm.adjustFractMicroseconds(fval, 86400e6), mDay
			case unitWeek:
				ok, tmask = itm.adjustDays(val, 7) && itm.adjustFractDays(fval, 7), mWeek
			case unitMonth:
				ok, tmask = itm.adjustMonths(val) && itm.adjustFractDays(fval, 30), mMonth
			case unitYear:
				ok, tmask = itm.adjustYears(val, 1) && itm.adjustFractYears(fval, 1), mYear
			case unitDecade:
				ok, tmask = itm.adjustYears(val, 10) && itm.adjustFractYears(fval, 10), mDecade
			case unitCentury:
				ok, tmask = itm.adjustYears(val, 100) && itm.adjustFractYears(fval, 100), mCentury
			case unitMillennium:
				ok, tmask = itm.adjustYears(val, 1000) && itm.adjustFractYears(fval, 1000), mMillennium
			default:
				return dtBadFormat
			}
			if !ok {
				return dtFieldOverflow
			}
		case fieldString, fieldSpecial:
			kw, known := intervalWords[keywordKey(f.s)]
			if !known {
				return dtBadFormat
			}
			tmask = 0
			switch kw.typ {
			case kwIgnore:
				continue
			case kwUnits:
				typ = kw.val
			case kwAgo:
				isBefore = true
				typ = unitOther // a number right before "ago" has no unit
			}
		default:
			return dtBadFormat
		}
		if tmask&fmask != 0 {
			return dtBadFormat
		}
		fmask |= tmask
	}
	if fmask == 0 {
		return dtBadFormat
	}
	if isBefore {
		if itm.usec == math.MinInt64 || itm.mday == math.MinInt32 || itm.mon == math.MinInt32 || itm.years == math.MinInt32 {
			return dtFieldOverflow
		}
		itm.usec, itm.mday, itm.mon, itm.years = -itm.usec, -itm.mday, -itm.mon, -itm.years
	}
	return dtOK
}

// decodeTimeForInterval reads h:mm[:ss[.fff]] or mm:ss.fff, hours of any
// size, and sets (not adds) the time part (PostgreSQL's
// DecodeTimeForInterval).
func decodeTimeForInterval(str string, itm *itmIn) (int, dtErr) {
	h, cp, of := strtol(str, 64)
	if of {
		return 0, dtFieldOverflow
	}
	if !strings.HasPrefix(cp, ":") {
		return 0, dtBadFormat
	}
	m, cp, of := strtol(cp[1:], 32)
	if of {
		return 0, dtFieldOverflow
	}
	var sec, fsec int64
	switch {
	case cp == "":
	case cp[0] == '.':
		var e dtErr
		if fsec, e = parseFractionalSecond(cp); e != dtOK {
			return 0, e
		}
		if h > math.MaxInt32 || h < math.MinInt32 {
			return 0, dtFieldOverflow
		}
		h, m, sec = 0, h, m
	case cp[0] == ':':
		if sec, cp, of = strtol(cp[1:], 32); of {
			return 0, dtFieldOverflow
		}
		if strings.HasPrefix(cp, ".") {
			var e dtErr
			if fsec, e = parseFractionalSecond(cp); e != dtOK {
				return 0, e
			}
		} else if cp != "" {
			return 0, dtBadFormat
		}
	default:
		return 0, dtBadFormat
	}
	if h < 0 || m < 0 || m > 59 || sec < 0 || sec > 60 || fsec < 0 || fsec > 1e6 {
		return 0, dtFieldOverflow
	}
	us := fsec
	var ok bool
	if us, ok = mulAdd64(h, 3600e6, us); !ok {
		return 0, dtFieldOverflow
	}
	if us, ok = mulAdd64(m, 60e6, us); !ok {
		return 0, dtFieldOverflow
	}
	if us, ok = mulAdd64(sec, 1e6, us); !ok {
		return 0, dtFieldOverflow
	}
	itm.usec = us
	return mTime, dtOK
}

// parseFraction reads ".fff" (a lone "." is zero).
func parseFraction(s string) (float64, dtErr) {
	if s == "." {
		return 0, dtOK
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || strings.ContainsAny(s, "_xXpPiInN") {
		return 0, dtBadFormat
	}
	return f, dtOK
}

// mulAdd64 returns a*b+c, or false on int64 overflow (b is not zero).
func mulAdd64(a, b, c int64) (int64, bool) {
	if a != 0 {
		p := a * b
		if p/b != a {
			return 0, false
		}
		s := p + c
		if (c > 0 && s < p) || (c < 0 && s > p) {
			return 0, false
		}
		return s, true
	}
	return c, true
}

func add32(a int32, b int64) (int32, bool) {
	s := int64(a) + b
	if s < math.MinInt32 || s > math.MaxInt32 {
		return a, false
	}
	return int32(s), true
}

func (itm *itmIn) adjustFractMicroseconds(frac float64, scale int64) bool {
	if frac == 0 {
		return true
	}
	frac *= float64(scale)
	usec := int64(frac)
	frac -= float64(usec)
	if frac > 0.5 {
		usec++
	} else if frac < -0.5 {
		usec--
	}
	s := itm.usec + usec
	if (usec > 0 && s < itm.usec) || (usec < 0 && s > itm.usec) {
		return false
	}
	itm.usec = s
	return true
}

func (itm *itmIn) adjustFractDays(frac float64, scale int) bool {
	if frac == 0 {
		return true
	}
	frac *= float64(scale)
	extra := int64(frac)
	var ok bool
	if itm.mday, ok = add32(itm.mday, extra); !ok {
		return false
	}
	return itm.adjustFractMicroseconds(frac-float64(extra), 86400e6)
}

func (itm *itmIn) adjustFractYears(frac float64, scale int) bool {
	extra := int64(math.RoundToEven(frac * float64(scale) * 12))
	var ok bool
	itm.mon, ok = add32(itm.mon, extra)
	return ok
}

func (itm *itmIn) adjustMicroseconds(val int64, fval float64, scale int64) bool {
	s, ok := mulAdd64(val, scale, itm.usec)
	if !ok {
		return false
	}
	itm.usec = s
	return itm.adjustFractMicroseconds(fval, scale)
}

func (itm *itmIn) adjustDays(val int64, scale int64) bool {
	if val < math.MinInt32 || val > math.MaxInt32 {
		return false
	}
	d := val * scale
	if d < math.MinInt32 || d > math.MaxInt32 {
		return false
	}
	var ok bool
	itm.mday, ok = add32(itm.mday, d)
	return ok
}

func (itm *itmIn) adjustMonths(val int64) bool {
	if val < math.MinInt32 || val > math.MaxInt32 {
		return false
	}
	var ok bool
	itm.mon, ok = add32(itm.mon, val)
	return ok
}

func (itm *itmIn) adjustYears(val int64, scale int64) bool {
	if val < math.MinInt32 || val > math.MaxInt32 {
		return false
	}
	y := val * scale
	if y < math.MinInt32 || y > math.MaxInt32 {
		return false
	}
	var ok bool
	itm.years, ok = add32(itm.years, y)
	return ok
}

// decodeISO8601Interval reads ISO 8601 durations, the designator form
// (P1Y2M3DT4H5M6S, with fractions in any field) and the alternative form
// (P0001-02-03T04:05:06, P00010203T040506), as PostgreSQL does.
func decodeISO8601Interval(str string, itm *itmIn) dtErr {
	if len(str) < 2 || str[0] != 'P' {
		return dtBadFormat
	}
	str = str[1:]
	datePart, haveField := true, false
	for len(str) > 0 {
		if str[0] == 'T' {
			datePart, haveField = false, false
			str = str[1:]
			continue
		}
		fieldStart := str
		val, fval, rest, e := parseISO8601Number(str)
		if e != dtOK {
			return e
		}
		str = rest
		var unit byte
		if len(str) > 0 {
			unit, str = str[0], str[1:]
		}
		if datePart {
			switch unit {
			case 'Y':
				if !itm.adjustYears(val, 1) || !itm.adjustFractYears(fval, 1) {
					return dtFieldOverflow
				}
			case 'M':
				if !itm.adjustMonths(val) || !itm.adjustFractDays(fval, 30) {
					return dtFieldOverflow
				}
			case 'W':
				if !itm.adjustDays(val, 7) || !itm.adjustFractDays(fval, 7) {
					return dtFieldOverflow
				}
			case 'D':
				if !itm.adjustDays(val, 1) || !itm.adjustFractMicroseconds(fval, 86400e6) {
					return dtFieldOverflow
				}
			case 'T', 0, '-':
				if unit != '-' && iso8601IntegerWidth(fieldStart) == 8 && !haveField {
					// YYYYMMDD
					if !itm.adjustYears(val/10000, 1) || !itm.adjustMonths((val/100)%100) ||
						!itm.adjustDays(val%100, 1) || !itm.adjustFractMicroseconds(fval, 86400e6) {
						return dtFieldOverflow
					}
					if unit == 0 {
						return dtOK
					}
					datePart, haveField = false, false
					continue
				}
				// YYYY-MM-DD
				if haveField {
					return dtBadFormat
				}
				if !itm.adjustYears(val, 1) || !itm.adjustFractYears(fval, 1) {
					return dtFieldOverflow
				}
				if unit == 0 {
					return dtOK
				}
				if unit == 'T' {
					datePart, haveField = false, false
					continue
				}
				if val, fval, str, e = parseISO8601Number(str); e != dtOK {
					return e
				}
				if !itm.adjustMonths(val) || !itm.adjustFractDays(fval, 30) {
					return dtFieldOverflow
				}
				if str == "" {
					return dtOK
				}
				if str[0] == 'T' {
					datePart, haveField = false, false
					continue
				}
				if str[0] != '-' {
					return dtBadFormat
				}
				if val, fval, str, e = parseISO8601Number(str[1:]); e != dtOK {
					return e
				}
				if !itm.adjustDays(val, 1) || !itm.adjustFractMicroseconds(fval, 86400e6) {
					return dtFieldOverflow
				}
				if str == "" {
					return dtOK
				}
				if str[0] == 'T' {
					datePart, haveField = false, false
					continue
				}
				return dtBadFormat
			default:
				return dtBadFormat
			}
		} else {
			switch unit {
			case 'H':
				if !itm.adjustMicroseconds(val, fval, 3600e6) {
					return dtFieldOverflow
				}
			case 'M':
				if !itm.adjustMicroseconds(val, fval, 60e6) {
					return dtFieldOverflow
				}
			case 'S':
				if !itm.adjustMicroseconds(val, fval, 1e6) {
					return dtFieldOverflow
				}
			case 0, ':':
				if unit == 0 && iso8601IntegerWidth(fieldStart) == 6 && !haveField {
					// HHMMSS
					if !itm.adjustMicroseconds(val/10000, 0, 3600e6) || !itm.adjustMicroseconds((val/100)%100, 0, 60e6) ||
						!itm.adjustMicroseconds(val%100, 0, 1e6) || !itm.adjustFractMicroseconds(fval, 1) {
						return dtFieldOverflow
					}
					return dtOK
				}
				// HH:MM:SS
				if haveField {
					return dtBadFormat
				}
				if !itm.adjustMicroseconds(val, fval, 3600e6) {
					return dtFieldOverflow
				}
				if unit == 0 {
					return dtOK
				}
				if val, fval, str, e = parseISO8601Number(str); e != dtOK {
					return e
				}
				if !itm.adjustMicroseconds(val, fval, 60e6) {
					return dtFieldOverflow
				}
				if str == "" {
					return dtOK
				}
				if str[0] != ':' {
					return dtBadFormat
				}
				if val, fval, str, e = parseISO8601Number(str[1:]); e != dtOK {
					return e
				}
				if !itm.adjustMicroseconds(val, fval, 1e6) {
					return dtFieldOverflow
				}
				if str == "" {
					return dtOK
				}
				return dtBadFormat
			default:
				return dtBadFormat
			}
		}
		haveField = true
	}
	return dtOK
}

// parseISO8601Number reads a number as C's strtod would at the start of
// str (digits, a point, an exponent), split into its integral part and
// fraction; beyond ±1e15 is an overflow.
func parseISO8601Number(str string) (ipart int64, fpart float64, rest string, e dtErr) {
	if str == "" || !(isDigit(str[0]) || str[0] == '-' || str[0] == '.') {
		return 0, 0, str, dtBadFormat
	}
	n := strtodPrefix(str)
	if n == 0 {
		return 0, 0, str, dtBadFormat
	}
	v, err := strconv.ParseFloat(str[:n], 64)
	if err != nil && !strings.Contains(err.Error(), "range") {
		return 0, 0, str, dtBadFormat
	}
	if math.IsNaN(v) || v < -1e15 || v > 1e15 {
		return 0, 0, str, dtFieldOverflow
	}
	if v >= 0 {
		ipart = int64(math.Floor(v))
	} else {
		ipart = -int64(math.Floor(-v))
	}
	return ipart, v - float64(ipart), str[n:], dtOK
}

// strtodPrefix returns the length of the decimal number at the start of s
// (sign, digits, point, exponent), 0 if there is none.
func strtodPrefix(s string) int {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	digits := 0
	for i < len(s) && isDigit(s[i]) {
		i, digits = i+1, digits+1
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && isDigit(s[i]) {
			i, digits = i+1, digits+1
		}
	}
	if digits == 0 {
		return 0
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		j := i + 1
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		if j < len(s) && isDigit(s[j]) {
			for j < len(s) && isDigit(s[j]) {
				j++
			}
			i = j
		}
	}
	return i
}

func iso8601IntegerWidth(s string) int {
	s = strings.TrimPrefix(s, "-")
	n := 0
	for n < len(s) && isDigit(s[n]) {
		n++
	}
	return n
}
