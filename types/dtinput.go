package types

import (
	"time"

	"streamdb/sqlerr"
)

// Julian day of PostgreSQL's epoch, 2000-01-01.
const postgresEpochJulian = 2451545

// nowFunc is the clock that 'now', 'today', 'tomorrow' and 'yesterday' read
// (a variable so that tests can fix it).
var nowFunc = time.Now

// dateTimeError turns a decoding error into PostgreSQL's error for input s
// of type typeName.
func dateTimeError(e dtErr, s, typeName, badZone string) error {
	switch e {
	case dtFieldOverflow:
		return sqlerr.New(sqlerr.DatetimeFieldOverflow, "date/time field value out of range: \"%s\"", s)
	case dtMDFieldOverflow:
		return sqlerr.New(sqlerr.DatetimeFieldOverflow, "date/time field value out of range: \"%s\"", s).
			WithHint("Dates are read as year-month-day or month/day/year (DateStyle ISO, MDY).")
	case dtTZDispOverflow:
		return sqlerr.New(sqlerr.InvalidTimeZoneDisplacement, "time zone displacement out of range: \"%s\"", s)
	case dtBadZone:
		return sqlerr.New(sqlerr.InvalidParameterValue, "time zone \"%s\" not recognized", badZone).
			WithHint("Time zone names are those of the IANA database, such as Europe/Berlin or America/New_York.")
	}
	return sqlerr.New(sqlerr.InvalidDatetimeFormat, "invalid input syntax for type %s: \"%s\"", typeName, s)
}

// decodeDateTimeText splits and decodes date or timestamp text.
func decodeDateTimeText(s, typeName string, bufSize int) (dtResult, error) {
	fields, e := splitDateTime(s, bufSize)
	var r dtResult
	if e == dtOK {
		r, e = decodeDateTime(fields, nowFunc)
	}
	if e != dtOK {
		return r, dateTimeError(e, s, typeName, r.badZone)
	}
	return r, nil
}

// timestampFromTm converts a decoded date and time to microseconds since
// 2000 (PostgreSQL's tm2timestamp); withZone applies the offset read.
// ok is false outside the timestamp range.
func timestampFromTm(r dtResult, withZone bool) (int64, bool) {
	tm := r.tm
	if !validJulian(tm.year, tm.mon, tm.mday) {
		return 0, false
	}
	days := int64(date2j(tm.year, tm.mon, tm.mday) - postgresEpochJulian)
	if days < MinTimestampMicros/86400e6-2 || days > EndTimestampMicros/86400e6+2 {
		return 0, false
	}
	us := days*86400e6 + ((int64(tm.hour)*60+int64(tm.min))*60+int64(tm.sec))*1e6 + tm.fsec
	if withZone {
		us += int64(r.tz) * 1e6
	}
	if us < MinTimestampMicros || us >= EndTimestampMicros {
		return 0, false
	}
	return us, true
}

// parseTimestampDatum is ParseText for TIMESTAMP and TIMESTAMPTZ, as
// PostgreSQL's timestamp_in and timestamptz_in: TIMESTAMP ignores a zone
// or offset given (it is checked, not applied); TIMESTAMPTZ applies it,
// and reads a value without one as UTC, the session time zone.
func parseTimestampDatum(s string, t Type) (Datum, error) {
	if us, ok := fastTimestamp(s, t == Timestamptz); ok {
		return NewTimestamp2000(us), nil
	}
	r, err := decodeDateTimeText(s, inputTypeName(t), dateTimeBufSize)
	if err != nil {
		return Null, err
	}
	switch r.special {
	case rsvEpoch:
		return NewTimestamp2000(UnixEpochMicros), nil
	case rsvLate:
		return NewTimestamp2000(TimestampInfinity), nil
	case rsvEarly:
		return NewTimestamp2000(TimestampNegInfinity), nil
	}
	us, ok := timestampFromTm(r, t == Timestamptz)
	if !ok {
		return Null, sqlerr.New(sqlerr.DatetimeFieldOverflow, "timestamp out of range: \"%s\"", s)
	}
	return NewTimestamp2000(us), nil
}

// inputTypeName names a type in input errors as PostgreSQL does.
func inputTypeName(t Type) string {
	switch t {
	case Timestamp:
		return "timestamp"
	case Time:
		return "time"
	}
	return t.String()
}

// parseDateDatum is ParseText for DATE, as PostgreSQL's date_in: the date
// part of any date/time input (a time and zone are checked and dropped).
func parseDateDatum(s string) (Datum, error) {
	r, err := decodeDateTimeText(s, "date", dateBufSize)
	if err != nil {
		return Null, err
	}
	switch r.special {
	case rsvEpoch:
		return NewDate(0), nil
	case rsvLate:
		return NewDate(DateInfinity), nil
	case rsvEarly:
		return NewDate(DateNegInfinity), nil
	}
	tm := r.tm
	if !validJulian(tm.year, tm.mon, tm.mday) {
		return Null, sqlerr.New(sqlerr.DatetimeFieldOverflow, "date out of range: \"%s\"", s)
	}
	days := int64(date2j(tm.year, tm.mon, tm.mday) - unixEpochJulian)
	if days < MinDateDays || days >= EndDateDays {
		return Null, sqlerr.New(sqlerr.DatetimeFieldOverflow, "date out of range: \"%s\"", s)
	}
	return NewDate(days), nil
}
