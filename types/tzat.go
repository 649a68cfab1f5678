package types

import (
	"strings"
	"time"
)

// TimeZone is a zone as timezone(zone, ...) and AT TIME ZONE name it: a
// fixed offset, or a tzdata zone whose offset depends on the instant.
type TimeZone struct {
	east int // seconds east of UTC, when loc is nil
	loc  *time.Location
}

// FixedTimeZone is the zone east seconds east of UTC.
func FixedTimeZone(east int) TimeZone { return TimeZone{east: east} }

// LookupTimeZone finds a zone as PostgreSQL 15's timestamptz_zone does:
// a time zone abbreviation first (any case; one that stands for a zone
// is that zone), else a tzdata name or a POSIX-style offset such as
// "UTC+5" or "+05", whose hours count WEST of UTC.
func LookupTimeZone(name string) (TimeZone, bool) {
	if ab, ok := zoneAbbrevs[strings.ToLower(name)]; ok {
		if ab.zone == "" {
			return TimeZone{east: ab.offset}, true
		}
		if loc, ok := loadZone(ab.zone); ok {
			return TimeZone{loc: loc}, true
		}
	}
	if loc, ok := loadZone(name); ok {
		return TimeZone{loc: loc}, true
	}
	// PostgreSQL reads a bare signed offset as a POSIX zone with an empty
	// name ("+05" is five hours west).
	if len(name) > 1 && (name[0] == '+' || name[0] == '-') {
		if loc, ok := posixZone("UTC" + name); ok {
			return TimeZone{loc: loc}, true
		}
	}
	return TimeZone{}, false
}

// Local is the wall-clock time in z (a timestamp's microseconds) of the
// instant utc (a timestamptz's microseconds): timestamptz AT TIME ZONE z.
func (z TimeZone) Local(utc int64) (int64, bool) {
	if !TimestampFinite(utc) {
		return utc, true
	}
	east := z.east
	if z.loc != nil {
		_, east = TimeOfMicros(utc).In(z.loc).Zone()
	}
	return shiftMicros(utc, int64(east))
}

// UTC is the instant (a timestamptz's microseconds) at which the wall
// clock in z reads local (a timestamp's microseconds): timestamp AT TIME
// ZONE z. A wall-clock time skipped or repeated by a transition takes
// the offset PostgreSQL gives it (zoneOffset).
func (z TimeZone) UTC(local int64) (int64, bool) {
	if !TimestampFinite(local) {
		return local, true
	}
	east := z.east
	if z.loc != nil {
		secs := floorDiv(local-UnixEpochMicros, 1e6)
		east = zoneOffset(secs, z.loc)
	}
	return shiftMicros(local, -int64(east))
}

// shiftMicros adds secs seconds to the timestamp us; ok is false when
// the result is outside the timestamp range.
func shiftMicros(us, secs int64) (int64, bool) {
	r := us + secs*1e6
	if (secs > 0 && r < us) || (secs < 0 && r > us) || !ValidTimestamp(r) || !TimestampFinite(r) {
		return 0, false
	}
	return r, true
}
