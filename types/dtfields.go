package types

import (
	"strconv"
	"strings"
	"time"
)

// The readers of single fields that decodeDateTime (PostgreSQL's
// DecodeDateTime) and decodeTimeOnly (DecodeTimeOnly) share: PostgreSQL
// writes these branches alike in both functions, so one reader each keeps
// the two decoders in step.

// takeISOTime lets a time field follow *ptype: none, or the ISO "T" between
// a date and a time, which the field then uses up. After any other unit
// label ("h", "y", ...) a time is bad format.
func takeISOTime(ptype *int) dtErr {
	if *ptype == 0 {
		return dtOK
	}
	if *ptype != unitTime {
		return dtBadFormat
	}
	*ptype = 0
	return dtOK
}

// decodeLabeledNumber reads the number after a unit label ptype ("y2001",
// "m02", "j2451187.5", "s6.5") or after the ISO "T" ("T040506"), given
// the parts fmask has already read. "m" is the minute when a month and an
// hour came before it, else the month. julian reports a Julian day.
// Only a Julian day, a second or the time after "T" may have a fraction.
func decodeLabeledNumber(s string, ptype, fmask int, tm *pgTm, is2digits *bool) (tmask int, julian bool, e dtErr) {
	v, cp, of := strtol(s, 32)
	if of {
		return 0, false, dtFieldOverflow
	}
	if strings.HasPrefix(cp, ".") {
		if ptype != unitJulian && ptype != unitTime && ptype != unitSecond {
			return 0, false, dtBadFormat
		}
	} else if cp != "" {
		return 0, false, dtBadFormat
	}
	val := int(v)
	switch ptype {
	case unitYear:
		tm.year, tmask = val, mYear
	case unitMonth:
		if fmask&mMonth != 0 && fmask&mHour != 0 {
			tm.min, tmask = val, mMinute
		} else {
			tm.mon, tmask = val, mMonth
		}
	case unitDay:
		tm.mday, tmask = val, mDay
	case unitHour:
		tm.hour, tmask = val, mHour
	case unitMinute:
		tm.min, tmask = val, mMinute
	case unitSecond:
		tm.sec, tmask = val, mSecond
		if cp != "" {
			fs, e := parseFractionalSecond(cp)
			if e != dtOK {
				return 0, false, e
			}
			tm.fsec, tmask = fs, mAllSecs
		}
	case unitJulian:
		if val < 0 {
			return 0, false, dtFieldOverflow
		}
		tmask, julian = mDate, true
		tm.year, tm.mon, tm.mday = j2date(val)
		if cp != "" {
			frac, err := strconv.ParseFloat(cp, 64)
			if err != nil {
				return 0, false, dtBadFormat
			}
			dt2time(frac*86400e6, tm)
			tmask |= mTime
		}
	case unitTime:
		if tmask, e = decodeNumberField(s, fmask|mDate, tm, is2digits); e < 0 {
			return 0, false, e
		}
		if tmask != mTime {
			return 0, false, dtBadFormat
		}
	default:
		return 0, false, dtBadFormat
	}
	return tmask, julian, dtOK
}

// lookupWord finds a word of date/time text: a zone abbreviation first,
// else a keyword (kw is zero when it is neither).
func lookupWord(s string) (ab zoneAbbrev, isAbbrev bool, kw keyword) {
	if ab, ok := zoneAbbrevs[s]; ok {
		return ab, true, keyword{}
	}
	return zoneAbbrev{}, false, dateKeywords[keywordKey(s)]
}

// abbrevZone applies a zone abbreviation: one with a fixed offset sets
// *tz; one that stands for a zone (PostgreSQL's DYNTZ) sets *zone, whose
// offset depends on the date and time read.
func abbrevZone(ab zoneAbbrev, tz *int, zone **time.Location) (tmask int, e dtErr) {
	if ab.zone != "" {
		loc, ok := loadZone(ab.zone)
		if !ok {
			return 0, dtBadFormat
		}
		*zone = loc
		return mDynTZ | mTZ, dtOK
	}
	tmask = mTZ
	if ab.dst {
		tmask |= mDTZ
	}
	*tz = -ab.offset
	return tmask, dtOK
}

// isoTimeFollows reports whether the field after fields[i] (an ISO "T")
// can be the time it labels.
func isoTimeFollows(fields []dtField, i int) bool {
	if i >= len(fields)-1 {
		return false
	}
	n := fields[i+1].typ
	return n == fieldNumber || n == fieldTime || n == fieldDate
}

// applyModifier applies the keywords both decoders read alike: "dst" (an
// hour onto the zone's offset), AM/PM and AD/BC. ok is false for any
// other keyword.
func applyModifier(kw keyword, tz, mer *int, bc *bool) (tmask int, ok bool) {
	switch kw.typ {
	case kwDTZMod:
		*tz -= kw.val
		return mDTZMod | mDTZ, true
	case kwAMPM:
		*mer = kw.val
		return mAMPM, true
	case kwADBC:
		*bc = kw.val == 1
		return mADBC, true
	}
	return 0, false
}
