package types

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// kwType is what a keyword of date/time text is.
type kwType uint8

const (
	kwReserved kwType = iota + 1 // epoch, infinity, now, today...
	kwMonth
	kwIgnore // "at", "on"
	kwAMPM
	kwADBC
	kwDOW
	kwUnits   // a label for the next number: y, m, d, h, mm, s, j
	kwISOTime // "t" between an ISO date and time
	kwDTZMod  // "dst"
	kwAgo     // intervals only
)

// Values of reserved words and units.
const (
	rsvNow = iota + 1
	rsvToday
	rsvTomorrow
	rsvYesterday
	rsvZulu
	rsvEpoch
	rsvLate
	rsvEarly

	unitYear
	unitMonth
	unitDay
	unitHour
	unitMinute
	unitSecond
	unitMillisec
	unitMicrosec
	unitWeek
	unitDecade
	unitCentury
	unitMillennium
	unitJulian
	unitTime // the ISO "t"
	unitOther
)

type keyword struct {
	typ kwType
	val int
}

// dateKeywords are the words of date and timestamp input (PostgreSQL's
// datetktbl).
var dateKeywords = map[string]keyword{
	"-infinity": {kwReserved, rsvEarly}, "ad": {kwADBC, 0}, "allballs": {kwReserved, rsvZulu},
	"am": {kwAMPM, 0}, "apr": {kwMonth, 4}, "april": {kwMonth, 4}, "at": {kwIgnore, 0},
	"aug": {kwMonth, 8}, "august": {kwMonth, 8}, "bc": {kwADBC, 1}, "d": {kwUnits, unitDay},
	"dec": {kwMonth, 12}, "december": {kwMonth, 12}, "dow": {kwUnits, unitOther}, "doy": {kwUnits, unitOther},
	"dst": {kwDTZMod, 3600}, "epoch": {kwReserved, rsvEpoch}, "feb": {kwMonth, 2}, "february": {kwMonth, 2},
	"fri": {kwDOW, 5}, "friday": {kwDOW, 5}, "h": {kwUnits, unitHour}, "infinity": {kwReserved, rsvLate},
	"isodow": {kwUnits, unitOther}, "isoyear": {kwUnits, unitOther}, "j": {kwUnits, unitJulian},
	"jan": {kwMonth, 1}, "january": {kwMonth, 1}, "jd": {kwUnits, unitJulian}, "jul": {kwMonth, 7},
	"julian": {kwUnits, unitJulian}, "july": {kwMonth, 7}, "jun": {kwMonth, 6}, "june": {kwMonth, 6},
	"m": {kwUnits, unitMonth}, "mar": {kwMonth, 3}, "march": {kwMonth, 3}, "may": {kwMonth, 5},
	"mm": {kwUnits, unitMinute}, "mon": {kwDOW, 1}, "monday": {kwDOW, 1}, "nov": {kwMonth, 11},
	"november": {kwMonth, 11}, "now": {kwReserved, rsvNow}, "oct": {kwMonth, 10}, "october": {kwMonth, 10},
	"on": {kwIgnore, 0}, "pm": {kwAMPM, 1}, "s": {kwUnits, unitSecond}, "sat": {kwDOW, 6},
	"saturday": {kwDOW, 6}, "sep": {kwMonth, 9}, "sept": {kwMonth, 9}, "september": {kwMonth, 9},
	"sun": {kwDOW, 0}, "sunday": {kwDOW, 0}, "t": {kwISOTime, unitTime}, "thu": {kwDOW, 4},
	"thur": {kwDOW, 4}, "thurs": {kwDOW, 4}, "thursday": {kwDOW, 4}, "today": {kwReserved, rsvToday},
	"tomorrow": {kwReserved, rsvTomorrow}, "tue": {kwDOW, 2}, "tues": {kwDOW, 2}, "tuesday": {kwDOW, 2},
	"wed": {kwDOW, 3}, "wednesday": {kwDOW, 3}, "weds": {kwDOW, 3}, "y": {kwUnits, unitYear},
	"yesterday": {kwReserved, rsvYesterday},
}

// Field masks: which parts of a date/time a field has given.
const (
	mYear = 1 << iota
	mMonth
	mDay
	mHour
	mMinute
	mSecond
	mMillisecond
	mMicrosecond
	mTZ
	mDTZ
	mDynTZ
	mDTZMod
	mDOY
	mDOW
	mAMPM
	mADBC
	mWeek
	mDecade
	mCentury
	mMillennium

	mDate    = mYear | mMonth | mDay
	mAllSecs = mSecond | mMillisecond | mMicrosecond
	mTime    = mHour | mMinute | mAllSecs
)

// pgTm is a broken-down date and time being decoded (PostgreSQL's pg_tm).
type pgTm struct {
	year, mon, mday, hour, min, sec, yday int
	fsec                                  int64 // microseconds
}

// dtResult is what decodeDateTime read: a date and time and a zone
// offset, or a special value.
type dtResult struct {
	tm      pgTm
	tz      int // seconds west of UTC (PostgreSQL's sign)
	special int // 0, rsvEpoch, rsvLate or rsvEarly
	badZone string
}

// Meridian of a time (PostgreSQL's AM, PM, HR24).
const (
	merAM = iota
	merPM
	merHR24
)

// decodeDateTime interprets the fields of a date or timestamp as
// PostgreSQL's DecodeDateTime does (DateStyle ISO, MDY; session time zone
// UTC). A zone given as a name or an abbreviation is resolved for the date
// and time given.
func decodeDateTime(fields []dtField, now func() time.Time) (dtResult, dtErr) {
	var r dtResult
	tm := &r.tm
	fmask, tmask := 0, 0
	ptype := 0
	mer := merHR24
	haveTextMonth, isJulian, is2digits, bc := false, false, false, false
	var namedTz *time.Location
	for i, f := range fields {
		tmask = 0
		switch f.typ {
		case fieldDate:
			switch {
			case ptype == unitJulian:
				// An integral Julian day with a zone attached.
				v, rest, of := strtol(f.s, 32)
				if of || v < 0 {
					return r, dtFieldOverflow
				}
				tm.year, tm.mon, tm.mday = j2date(int(v))
				isJulian = true
				if e := decodeTimezone(rest, &r.tz); e != dtOK {
					return r, e
				}
				tmask = mDate | mTime | mTZ
				ptype = 0
			case ptype != 0 || fmask&(mMonth|mDay) == mMonth|mDay:
				// With a date already, this is a zone name with
				// punctuation, or a run-together time with an offset.
				if isDigit(f.s[0]) || ptype != 0 {
					if e := takeISOTime(&ptype); e != dtOK {
						return r, e
					}
					var e dtErr
					if tmask, e = decodeTimeWithOffset(f.s, fmask, tm, &is2digits, &r.tz); e != dtOK {
						return r, e
					}
				} else {
					loc, ok := loadZone(f.orig)
					if !ok {
						r.badZone = f.s
						return r, dtBadZone
					}
					namedTz = loc
					tmask = mTZ
				}
			default:
				var e dtErr
				if tmask, e = decodeDate(f.s, fmask, &is2digits, tm); e != dtOK {
					return r, e
				}
			}

		case fieldTime:
			if e := takeISOTime(&ptype); e != dtOK {
				return r, e
			}
			var e dtErr
			if tmask, e = decodeTime(f.s, tm); e != dtOK {
				return r, e
			}
			if timeOverflows(tm.hour, tm.min, tm.sec, tm.fsec) {
				return r, dtFieldOverflow
			}

		case fieldTZ:
			if e := decodeTimezone(f.s, &r.tz); e != dtOK {
				return r, e
			}
			tmask = mTZ

		case fieldNumber:
			if ptype != 0 {
				// A number after a label: "y2001m02d04", "j2451187",
				// or the time after an ISO "t".
				var julian bool
				var e dtErr
				if tmask, julian, e = decodeLabeledNumber(f.s, ptype, fmask, tm, &is2digits); e != dtOK {
					return r, e
				}
				isJulian = isJulian || julian
				ptype = 0
				r.special = 0
				break
			}
			flen := len(f.s)
			dot := strings.IndexByte(f.s, '.')
			var e dtErr
			switch {
			case dot >= 0 && fmask&mDate == 0:
				tmask, e = decodeDate(f.s, fmask, &is2digits, tm)
			case dot > 2:
				// Digits then a fraction: a run-together date or time.
				tmask, e = decodeNumberField(f.s, fmask, tm, &is2digits)
			case flen >= 6 && (fmask&mDate == 0 || fmask&mTime == 0):
				// Six or more digits: YYYYMMDD or HHMMSS.
				tmask, e = decodeNumberField(f.s, fmask, tm, &is2digits)
			default:
				tmask, e = decodeNumber(f.s, haveTextMonth, fmask, tm, &is2digits)
			}
			if e < 0 {
				return r, e
			}

		case fieldString, fieldSpecial:
			ab, isAbbrev, kw := lookupWord(f.s)
			typ, val := kw.typ, kw.val
			if t, ok := applyModifier(kw, &r.tz, &mer, &bc); ok {
				tmask = t
				break
			}
			switch {
			case isAbbrev:
				var e dtErr
				if tmask, e = abbrevZone(ab, &r.tz, &namedTz); e != dtOK {
					return r, e
				}
			case typ == kwIgnore:
				continue
			case typ == kwReserved:
				switch val {
				case rsvNow:
					tmask = mDate | mTime | mTZ
					t := now().UTC()
					us := t.UnixMicro()
					setFromDays(tm, floorDiv(us, 86400e6))
					dt2time(float64(us-floorDiv(us, 86400e6)*86400e6), tm)
					r.tz = 0
				case rsvToday, rsvTomorrow, rsvYesterday:
					tmask = mDate
					days := floorDiv(now().UTC().UnixMicro(), 86400e6)
					switch val {
					case rsvTomorrow:
						days++
					case rsvYesterday:
						days--
					}
					setFromDays(tm, days)
				case rsvZulu:
					tmask = mTime | mTZ
					tm.hour, tm.min, tm.sec = 0, 0, 0
					r.tz = 0
				default: // epoch, infinity, -infinity
					tmask = mDate | mTime | mTZ
					r.special = val
				}
			case typ == kwMonth:
				tmask = mMonth
				// A number read as the month may have been the day.
				if fmask&mMonth != 0 && !haveTextMonth && fmask&mDay == 0 && tm.mon >= 1 && tm.mon <= 31 {
					tm.mday = tm.mon
					tmask = mDay
				}
				haveTextMonth = true
				tm.mon = val
			case typ == kwDOW:
				tmask = mDOW
			case typ == kwUnits:
				ptype = val
			case typ == kwISOTime:
				if fmask&mDate != mDate || !isoTimeFollows(fields, i) {
					return r, dtBadFormat
				}
				ptype = val
			default:
				// Last chance: an all-letter zone name such as "utc".
				loc, ok := loadZone(f.orig)
				if !ok {
					return r, dtBadFormat
				}
				namedTz = loc
				tmask = mTZ
			}
		default:
			return r, dtBadFormat
		}
		if tmask&fmask != 0 {
			return r, dtBadFormat
		}
		fmask |= tmask
	}
	if ptype != 0 {
		return r, dtBadFormat
	}
	if r.special != 0 {
		return r, dtOK
	}
	if e := validateDate(fmask, isJulian, is2digits, bc, tm); e != dtOK {
		return r, e
	}
	if e := applyMeridian(mer, tm); e != dtOK {
		return r, e
	}
	if fmask&mDate != mDate {
		if fmask&mTime == mTime {
			return r, dtTimeOnly
		}
		return r, dtBadFormat
	}
	if namedTz != nil {
		if fmask&mDTZMod != 0 {
			return r, dtBadFormat
		}
		if !validJulian(tm.year, tm.mon, tm.mday) {
			return r, dtFieldOverflow
		}
		local := (int64(date2j(tm.year, tm.mon, tm.mday))-unixEpochJulian)*86400 + int64(tm.hour*3600+tm.min*60+tm.sec)
		r.tz = -zoneOffset(local, namedTz)
	} else if fmask&mTZ == 0 && fmask&mDTZMod != 0 {
		return r, dtBadFormat
	}
	return r, dtOK
}

// decodeTimeWithOffset reads a time run together with an offset
// ("040506-08"): the offset into tz, the digits as decodeNumberField
// reads them given fmask.
func decodeTimeWithOffset(s string, fmask int, tm *pgTm, is2digits *bool, tz *int) (int, dtErr) {
	if fmask&mTime == mTime {
		return 0, dtBadFormat
	}
	cp := strings.IndexByte(s, '-')
	if cp < 0 {
		return 0, dtBadFormat
	}
	if e := decodeTimezone(s[cp:], tz); e != dtOK {
		return 0, e
	}
	tmask, e := decodeNumberField(s[:cp], fmask, tm, is2digits)
	if e < 0 {
		return 0, e
	}
	return tmask | mTZ, dtOK
}

// applyMeridian turns a 12-hour clock's hour with AM or PM into 24-hour
// time; an hour past 12 with either is out of range.
func applyMeridian(mer int, tm *pgTm) dtErr {
	if mer != merHR24 && tm.hour > 12 {
		return dtFieldOverflow
	}
	if mer == merAM && tm.hour == 12 {
		tm.hour = 0
	} else if mer == merPM && tm.hour != 12 {
		tm.hour += 12
	}
	return dtOK
}

// decodeDate reads a date with separators ("2020-01-05", "jan-08-1999",
// "1999.008"), as PostgreSQL's DecodeDate.
func decodeDate(str string, fmask int, is2digits *bool, tm *pgTm) (int, dtErr) {
	var parts []string
	for i := 0; i < len(str) && len(parts) < maxDateFields; {
		for i < len(str) && !isAlnum(str[i]) {
			i++
		}
		if i >= len(str) {
			return 0, dtBadFormat
		}
		start := i
		if isDigit(str[i]) {
			for i < len(str) && isDigit(str[i]) {
				i++
			}
		} else {
			for i < len(str) && isAlpha(str[i]) {
				i++
			}
		}
		parts = append(parts, str[start:i])
		i++ // the character after a part is a separator, whatever it is
	}
	tmask := 0
	haveTextMonth := false
	for k, p := range parts {
		if !isAlpha(p[0]) {
			continue
		}
		kw, ok := dateKeywords[keywordKey(p)]
		if ok && kw.typ == kwIgnore {
			parts[k] = ""
			continue
		}
		if !ok || kw.typ != kwMonth {
			return 0, dtBadFormat
		}
		tm.mon = kw.val
		haveTextMonth = true
		if fmask&mMonth != 0 {
			return 0, dtBadFormat
		}
		fmask |= mMonth
		tmask |= mMonth
		parts[k] = ""
	}
	for _, p := range parts {
		if p == "" {
			continue
		}
		dmask, e := decodeNumber(p, haveTextMonth, fmask, tm, is2digits)
		if e != dtOK {
			return 0, e
		}
		if fmask&dmask != 0 {
			return 0, dtBadFormat
		}
		fmask |= dmask
		tmask |= dmask
	}
	if fmask&^(mDOY|mTZ) != mDate {
		return 0, dtBadFormat
	}
	return tmask, dtOK
}

// decodeNumber places one number of a date (or a time run together) by
// what has been read so far, as PostgreSQL's DecodeNumber.
func decodeNumber(str string, haveTextMonth bool, fmask int, tm *pgTm, is2digits *bool) (int, dtErr) {
	flen := len(str)
	v, cp, of := strtol(str, 32)
	if of {
		return 0, dtFieldOverflow
	}
	if len(cp) == len(str) {
		return 0, dtBadFormat
	}
	val := int(v)
	if strings.HasPrefix(cp, ".") {
		// More than two digits before the point: a date or a time run
		// together (2001.360, 20011225, 040506.789).
		if len(str)-len(cp) > 2 {
			tmask, e := decodeNumberField(str, fmask|mDate, tm, is2digits)
			if e < 0 {
				return 0, e
			}
			return tmask, dtOK
		}
		fs, e := parseFractionalSecond(cp)
		if e != dtOK {
			return 0, e
		}
		tm.fsec = fs
	} else if cp != "" {
		return 0, dtBadFormat
	}
	if flen == 3 && fmask&mDate == mYear && val >= 1 && val <= 366 {
		tm.yday = val
		return mDOY | mMonth | mDay, dtOK
	}
	tmask := 0
	switch fmask & mDate {
	case 0:
		// YYYY-MM-DD with a year of more than two digits, else MDY.
		if flen >= 3 {
			tmask, tm.year = mYear, val
		} else {
			tmask, tm.mon = mMonth, val
		}
	case mYear:
		tmask, tm.mon = mMonth, val
	case mMonth:
		if haveTextMonth && flen < 3 {
			tmask, tm.mday = mDay, val
		} else if haveTextMonth {
			tmask, tm.year = mYear, val
		} else {
			tmask, tm.mday = mDay, val
		}
	case mYear | mMonth:
		if haveTextMonth && flen >= 3 && *is2digits {
			// The first number was the day after all: DD-MON-YYYY.
			tmask = mDay
			tm.mday, tm.year = tm.year, val
			*is2digits = false
		} else {
			tmask, tm.mday = mDay, val
		}
	case mDay:
		tmask, tm.mon = mMonth, val
	case mMonth | mDay:
		tmask, tm.year = mYear, val
	case mDate:
		t, e := decodeNumberField(str, fmask, tm, is2digits)
		if e < 0 {
			return 0, e
		}
		return t, dtOK
	default:
		return 0, dtBadFormat
	}
	if tmask == mYear {
		*is2digits = flen <= 2
	}
	return tmask, dtOK
}

// decodeNumberField reads digits run together: YYYYMMDD or YYMMDD before
// the date is complete, else HHMMSS or HHMM, with an optional fraction
// (PostgreSQL's DecodeNumberField). The mask is returned; a negative
// dtErr is an error.
func decodeNumberField(str string, fmask int, tm *pgTm, is2digits *bool) (int, dtErr) {
	if dot := strings.IndexByte(str, '.'); dot >= 0 {
		frac, err := strconv.ParseFloat(str[dot:], 64)
		if err != nil && !strings.HasSuffix(err.Error(), "invalid syntax") {
			return 0, dtBadFormat
		}
		if err != nil {
			frac = leadingFloat(str[dot:])
		}
		tm.fsec = int64(math.RoundToEven(frac * 1e6))
		str = str[:dot]
	} else if fmask&mDate != mDate {
		if n := len(str); n >= 6 {
			tm.mday = atoi(str[n-2:])
			tm.mon = atoi(str[n-4 : n-2])
			tm.year = atoi(str[:n-4])
			if n-4 == 2 {
				*is2digits = true
			}
			return mDate, 1
		}
	}
	if fmask&mTime != mTime {
		switch len(str) {
		case 6:
			tm.sec = atoi(str[4:])
			tm.min = atoi(str[2:4])
			tm.hour = atoi(str[:2])
			return mTime, 2
		case 4:
			tm.sec = 0
			tm.min = atoi(str[2:])
			tm.hour = atoi(str[:2])
			return mTime, 2
		}
	}
	return 0, dtBadFormat
}

// leadingFloat reads the longest prefix of s that is a decimal fraction
// (".digits"), as strtod stops at the first character it cannot use.
func leadingFloat(s string) float64 {
	i := 1
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	f, _ := strconv.ParseFloat("0"+s[:i], 64)
	return f
}

// decodeTime reads hh:mm[:ss[.fff]] or mm:ss.fff (PostgreSQL's DecodeTime
// for the full range).
func decodeTime(str string, tm *pgTm) (int, dtErr) {
	h, cp, of := strtol(str, 32)
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
	var s int64
	var fsec int64
	switch {
	case cp == "":
	case cp[0] == '.':
		// mm:ss.fff
		var e dtErr
		if fsec, e = parseFractionalSecond(cp); e != dtOK {
			return 0, e
		}
		h, m, s = 0, h, m
	case cp[0] == ':':
		s, cp, of = strtol(cp[1:], 32)
		if of {
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
	if h < 0 || m < 0 || m > 59 || s < 0 || s > 60 || fsec < 0 || fsec > 1e6 {
		return 0, dtFieldOverflow
	}
	tm.hour, tm.min, tm.sec, tm.fsec = int(h), int(m), int(s), fsec
	return mTime, dtOK
}

// parseFractionalSecond reads ".fff" as microseconds, rounded half to even
// as PostgreSQL's rint does.
func parseFractionalSecond(s string) (int64, dtErr) {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || strings.ContainsAny(s, "_xXpPiInN") {
		return 0, dtBadFormat
	}
	return int64(math.RoundToEven(f * 1e6)), dtOK
}

// decodeTimezone reads an offset "+hh", "-hh:mm", "+hhmm", "-hh:mm:ss"
// into seconds west of UTC (PostgreSQL's DecodeTimezone).
func decodeTimezone(str string, tz *int) dtErr {
	if str == "" || (str[0] != '+' && str[0] != '-') {
		return dtBadFormat
	}
	hr, cp, of := strtol(str[1:], 32)
	if of {
		return dtTZDispOverflow
	}
	var min, sec int64
	switch {
	case strings.HasPrefix(cp, ":"):
		if min, cp, of = strtol(cp[1:], 32); of {
			return dtTZDispOverflow
		}
		if strings.HasPrefix(cp, ":") {
			if sec, cp, of = strtol(cp[1:], 32); of {
				return dtTZDispOverflow
			}
		}
	case cp == "" && len(str) > 3:
		min, hr = hr%100, hr/100
	}
	if hr < 0 || hr > maxTZDisplacement || min < 0 || min >= 60 || sec < 0 || sec >= 60 {
		return dtTZDispOverflow
	}
	t := int((hr*60+min)*60 + sec)
	if str[0] == '-' {
		t = -t
	}
	*tz = -t
	if cp != "" {
		return dtBadFormat
	}
	return dtOK
}

// validateDate completes and checks the year, month and day read
// (PostgreSQL's ValidateDate): BC years, two-digit years (1970-2069), day
// of year.
func validateDate(fmask int, isJulian, is2digits, bc bool, tm *pgTm) dtErr {
	if fmask&mYear != 0 {
		switch {
		case isJulian:
		case bc:
			if tm.year <= 0 {
				return dtFieldOverflow
			}
			tm.year = -(tm.year - 1)
		case is2digits:
			if tm.year < 0 {
				return dtFieldOverflow
			}
			if tm.year < 70 {
				tm.year += 2000
			} else if tm.year < 100 {
				tm.year += 1900
			}
		default:
			if tm.year <= 0 {
				return dtFieldOverflow
			}
		}
	}
	if fmask&mDOY != 0 {
		tm.year, tm.mon, tm.mday = j2date(date2j(tm.year, 1, 1) + tm.yday - 1)
	}
	if fmask&mMonth != 0 && (tm.mon < 1 || tm.mon > 12) {
		return dtMDFieldOverflow
	}
	if fmask&mDay != 0 && (tm.mday < 1 || tm.mday > 31) {
		return dtMDFieldOverflow
	}
	if fmask&mDate == mDate && tm.mday > daysInMonth(tm.year, tm.mon) {
		return dtFieldOverflow
	}
	return dtOK
}

// timeOverflows reports a time of day past 24:00:00 (PostgreSQL's
// time_overflows; 24:00:00 and a leap second 60 are allowed).
func timeOverflows(h, m, s int, fsec int64) bool {
	if h < 0 || h > 24 || m < 0 || m >= 60 || s < 0 || s > 60 || fsec < 0 || fsec > 1e6 {
		return true
	}
	return ((int64(h)*60+int64(m))*60+int64(s))*1e6+fsec > 86400e6
}

func isLeap(y int) bool { return y%4 == 0 && (y%100 != 0 || y%400 == 0) }

func daysInMonth(y, m int) int {
	switch m {
	case 2:
		if isLeap(y) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// unixEpochJulian is the Julian day of 1970-01-01.
const unixEpochJulian = 2440588

// date2j returns the Julian day of a proleptic Gregorian date (year 0 is
// 1 BC), as PostgreSQL's date2j.
func date2j(y, m, d int) int {
	if m > 2 {
		m++
		y += 4800
	} else {
		m += 13
		y += 4799
	}
	century := y / 100
	j := y*365 - 32167
	j += y/4 - century + century/4
	j += 7834*m/256 + d
	return j
}

// j2date is the inverse of date2j for Julian days from 0.
func j2date(jd int) (y, m, d int) {
	julian := uint64(uint32(jd)) + 32044
	quad := julian / 146097
	extra := (julian-quad*146097)*4 + 3
	julian += 60 + quad*3 + extra/146097
	quad = julian / 1461
	julian -= quad * 1461
	yy := julian * 4 / 1461
	if yy != 0 {
		julian = (julian+305)%365 + 123
	} else {
		julian = (julian+306)%366 + 123
	}
	yy += quad * 4
	y = int(yy) - 4800
	quad = julian * 2141 / 65536
	d = int(julian - 7834*quad/256)
	m = int((quad+10)%12 + 1)
	return
}

// validJulian reports whether a date is within the Julian day range
// PostgreSQL's date arithmetic handles (IS_VALID_JULIAN).
func validJulian(y, m, d int) bool {
	return (y > -4713 || (y == -4713 && m >= 11)) && (y < 5874898 || (y == 5874898 && m < 6))
}

// setFromDays sets tm's date from days since 1970-01-01.
func setFromDays(tm *pgTm, days int64) {
	tm.year, tm.mon, tm.mday = j2date(int(days + unixEpochJulian))
}

// dt2time splits microseconds of a day into tm's clock fields.
func dt2time(us float64, tm *pgTm) {
	t := int64(us)
	tm.hour = int(t / 3600e6)
	t -= int64(tm.hour) * 3600e6
	tm.min = int(t / 60e6)
	t -= int64(tm.min) * 60e6
	tm.sec = int(t / 1e6)
	tm.fsec = t - int64(tm.sec)*1e6
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}
