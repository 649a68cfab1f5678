package types

import (
	"strings"
	"time"
)

// decodeTimeOnly interprets the fields of time or timetz input as
// PostgreSQL 15's DecodeTimeOnly does (session time zone UTC): a time,
// optionally with a zone (an offset, an abbreviation or a name), and a
// date only in the leading position PostgreSQL allows it ("2003-04-12
// 04:05:06"), which then resolves a zone name's offset. 'now' is the time
// of day of now; 'allballs' is 00:00:00 UTC. ISO labels ("T", "h", "m",
// "s") read as in timestamps.
func decodeTimeOnly(fields []dtField, now func() time.Time) (dtResult, dtErr) {
	var r dtResult
	tm := &r.tm
	fmask, tmask := 0, 0
	ptype := 0
	mer := merHR24
	is2digits, bc := false, false
	var namedTz, abbrevTz *time.Location
	nf := len(fields)
	for i, f := range fields {
		tmask = 0
		switch f.typ {
		case fieldDate:
			switch {
			case i == 0 && nf >= 2 && (fields[nf-1].typ == fieldDate || fields[1].typ == fieldTime):
				var e dtErr
				if tmask, e = decodeDate(f.s, fmask, &is2digits, tm); e != dtOK {
					return r, e
				}
			case isDigit(f.s[0]):
				// A time run together with an offset: 040506-08.
				var e dtErr
				if tmask, e = decodeTimeWithOffset(f.s, fmask|mDate, tm, &is2digits, &r.tz); e != dtOK {
					return r, e
				}
			default:
				loc, ok := loadZone(f.orig)
				if !ok {
					r.badZone = f.s
					return r, dtBadZone
				}
				namedTz, tmask = loc, mTZ
			}

		case fieldTime:
			if e := takeISOTime(&ptype); e != dtOK {
				return r, e
			}
			var e dtErr
			if tmask, e = decodeTime(f.s, tm); e != dtOK {
				return r, e
			}

		case fieldTZ:
			if e := decodeTimezone(f.s, &r.tz); e != dtOK {
				return r, e
			}
			tmask = mTZ

		case fieldNumber:
			if ptype != 0 {
				var e dtErr
				if tmask, _, e = decodeLabeledNumber(f.s, ptype, fmask, tm, &is2digits); e != dtOK {
					return r, e
				}
				ptype = 0
				break
			}
			dot := strings.IndexByte(f.s, '.')
			var e dtErr
			switch {
			case dot >= 0 && i == 0 && nf >= 2 && fields[nf-1].typ == fieldDate:
				tmask, e = decodeDate(f.s, fmask, &is2digits, tm)
			case dot > 2:
				tmask, e = decodeNumberField(f.s, fmask|mDate, tm, &is2digits)
			case dot >= 0:
				return r, dtBadFormat
			case len(f.s) > 4:
				tmask, e = decodeNumberField(f.s, fmask|mDate, tm, &is2digits)
			default:
				tmask, e = decodeNumber(f.s, false, fmask|mDate, tm, &is2digits)
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
				if tmask, e = abbrevZone(ab, &r.tz, &abbrevTz); e != dtOK {
					return r, e
				}
			case typ == kwIgnore:
				continue
			case typ == kwReserved && val == rsvNow:
				tmask = mTime
				us := now().UTC().UnixMicro()
				dt2time(float64(us-floorDiv(us, 86400e6)*86400e6), tm)
			case typ == kwReserved && val == rsvZulu:
				tmask = mTime | mTZ
				tm.hour, tm.min, tm.sec = 0, 0, 0
			case typ == kwReserved:
				return r, dtBadFormat
			case typ == kwMonth || typ == kwDOW:
				return r, dtBadFormat // DecodeTimeOnly has no month or weekday names
			case typ == kwUnits:
				if ptype != 0 {
					return r, dtBadFormat
				}
				ptype = val
			case typ == kwISOTime:
				if ptype != 0 || !isoTimeFollows(fields, i) {
					return r, dtBadFormat
				}
				ptype = val
			default:
				loc, ok := loadZone(f.orig)
				if !ok {
					return r, dtBadFormat
				}
				namedTz, tmask = loc, mTZ
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
	if e := validateDate(fmask, false, is2digits, bc, tm); e != dtOK {
		return r, e
	}
	if e := applyMeridian(mer, tm); e != dtOK {
		return r, e
	}
	if timeOverflows(tm.hour, tm.min, tm.sec, tm.fsec) {
		return r, dtFieldOverflow
	}
	if fmask&mTime != mTime {
		return r, dtBadFormat
	}
	hasDate := fmask&mDate == mDate
	local := func() int64 { // the wall-clock time given, as seconds since 1970
		days := floorDiv(now().UTC().Unix(), 86400)
		if hasDate {
			days = int64(date2j(tm.year, tm.mon, tm.mday) - unixEpochJulian)
		}
		return days*86400 + int64(tm.hour*3600+tm.min*60+tm.sec)
	}
	switch {
	case namedTz != nil:
		if fmask&mDTZMod != 0 {
			return r, dtBadFormat
		}
		if off, fixed := fixedOffset(namedTz); fixed {
			r.tz = -off
		} else if !hasDate {
			return r, dtBadFormat // the offset depends on the date
		} else {
			r.tz = -zoneOffset(local(), namedTz)
		}
	case abbrevTz != nil:
		if fmask&mDTZMod != 0 || (fmask&mDate != 0 && !hasDate) {
			return r, dtBadFormat
		}
		r.tz = -zoneOffset(local(), abbrevTz)
	case fmask&mTZ == 0 && fmask&mDTZMod != 0:
		return r, dtBadFormat
	}
	return r, dtOK
}

// fixedOffset returns a zone's offset east of UTC, in seconds, when it has
// one offset for all time (UTC, Etc/GMT+3, a POSIX "abc+3"): only then
// does a time without a date have an offset in it.
func fixedOffset(loc *time.Location) (int, bool) {
	t := time.Unix(0, 0).In(loc)
	start, end := t.ZoneBounds()
	if !start.IsZero() || !end.IsZero() {
		return 0, false
	}
	_, off := t.Zone()
	return off, true
}
