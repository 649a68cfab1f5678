package expr

import (
	"strings"
	"time"

	"streamdb/sqlerr"
	"streamdb/types"
)

// toDateFields are the template patterns to_date and to_timestamp read,
// longest first, with the most digits each takes.
var toDateFields = []struct {
	pat    string
	digits int
}{{"HH24", 2}, {"HH12", 2}, {"IYYY", 4}, {"YYYY", 4}, {"MONTH", 0}, {"MON", 0}, {"HH", 2}, {"MI", 2}, {"SS", 2},
	{"MS", 3}, {"US", 6}, {"MM", 2}, {"DD", 2}, {"AM", 0}, {"PM", 0}, {"A.D.", 0}, {"B.C.", 0}, {"AD", 0}, {"BC", 0},
	{"IW", 2}, {"ID", 1}, {"TZH", 2}, {"TZM", 2}, {"TZ", 0}, {"OF", 0}}

// parseDateTime reads s by the to_date/to_timestamp template format (the
// numeric fields YYYY MM DD HH24 HH12 HH MI SS MS US, the ISO week date
// IYYY IW ID, the offset TZH TZM, the names MONTH and MON in any case,
// AM/PM, AD/BC (with or without periods), FM, FX, "quoted text"; other
// characters skip one character of s) into a timestamp datum's
// microseconds (since 2000-01-01 UTC). Without FX blanks before a field are skipped; with it they must
// be matched by the template. TZ and OF are refused as PostgreSQL refuses
// them in input (0A000), and so is a template mixing the ISO week date
// with months and days of the month (22007).
func parseDateTime(s, format string) (int64, error) {
	year, month, day := int64(1), int64(1), int64(1)
	var hour, mi, sec, us int64
	var isoYear, isoWeek, isoDay int64
	var tzh, tzm int64
	tzNeg := false
	pm, h12, bc, fx := false, false, false, false
	iso, greg := false, false
	in := 0
	f := format
template:
	for len(f) > 0 {
		if strings.HasPrefix(strings.ToUpper(f), "FM") {
			f = f[2:]
			continue
		}
		if strings.HasPrefix(strings.ToUpper(f), "FX") {
			f, fx = f[2:], true
			continue
		}
		if f[0] == '"' {
			end := strings.IndexByte(f[1:], '"')
			if end < 0 {
				end = len(f) - 1
			}
			in = min(in+end, len(s))
			f = f[min(end+2, len(f)):]
			continue
		}
		matched := false
		for _, fd := range toDateFields {
			if !strings.HasPrefix(strings.ToUpper(f), fd.pat) {
				continue
			}
			matched = true
			f = f[len(fd.pat):]
			for !fx && in < len(s) && s[in] == ' ' {
				in++
			}
			switch fd.pat {
			case "TZ", "OF":
				return 0, sqlerr.New(sqlerr.FeatureNotSupported, "formatting field %q is only supported in to_char", fd.pat)
			case "AD", "BC", "A.D.", "B.C.":
				word := ""
				for _, w := range []string{"A.D.", "B.C.", "AD", "BC"} {
					if len(s)-in >= len(w) && strings.EqualFold(s[in:in+len(w)], w) {
						word = strings.ToUpper(w)
						break
					}
				}
				if word == "" {
					return 0, sqlerr.New(sqlerr.InvalidDatetimeFormat, "invalid value %q for %q", s[in:min(in+len(fd.pat), len(s))], fd.pat)
				}
				bc = word[0] == 'B'
				in += len(word)
				continue template
			case "TZH":
				if in < len(s) && (s[in] == '-' || s[in] == '+') {
					tzNeg = s[in] == '-'
					in++
				}
			}
			switch fd.pat {
			case "MONTH", "MON":
				m := 0
				for i := time.January; i <= time.December; i++ {
					name := i.String()
					if fd.pat == "MON" {
						name = name[:3]
					}
					if len(s)-in >= len(name) && strings.EqualFold(s[in:in+len(name)], name) {
						m, in = int(i), in+len(name)
						break
					}
				}
				if m == 0 {
					return 0, sqlerr.New(sqlerr.InvalidDatetimeFormat, "invalid value %q for %q", s[in:min(in+3, len(s))], fd.pat)
				}
				month, greg = int64(m), true
			case "AM", "PM":
				if len(s)-in < 2 || !strings.EqualFold(s[in:in+2], "AM") && !strings.EqualFold(s[in:in+2], "PM") {
					return 0, sqlerr.New(sqlerr.InvalidDatetimeFormat, "invalid value %q for %q", s[in:min(in+2, len(s))], fd.pat)
				}
				pm, h12 = strings.EqualFold(s[in:in+2], "PM"), true
				in += 2
			default:
				start := in
				for in < len(s) && in-start < fd.digits && s[in] >= '0' && s[in] <= '9' {
					in++
				}
				if in == start {
					if start >= len(s) {
						return 0, sqlerr.New(sqlerr.InvalidDatetimeFormat, "source string too short for %q formatting field", fd.pat)
					}
					return 0, sqlerr.New(sqlerr.InvalidDatetimeFormat, "invalid value %q for %q", s[start:min(start+fd.digits, len(s))], fd.pat)
				}
				var v int64
				for _, c := range s[start:in] {
					v = v*10 + int64(c-'0')
				}
				if fd.pat == "MS" || fd.pat == "US" {
					// Fractions: "5" in MS is 500 ms, as in PostgreSQL.
					for k := in - start; k < fd.digits; k++ {
						v *= 10
					}
				}
				switch fd.pat {
				case "YYYY":
					year = v
				case "MM":
					month, greg = v, true
				case "DD":
					day, greg = v, true
				case "IYYY":
					isoYear, iso = v, true
				case "IW":
					isoWeek, iso = v, true
				case "ID":
					// 1 to 6 are Monday to Saturday; PostgreSQL reads
					// any other digit as Sunday.
					isoDay, iso = 7, true
					if v >= 1 && v <= 6 {
						isoDay = v
					}
				case "TZH":
					tzh = v
				case "TZM":
					tzm = v
				case "HH24", "HH", "HH12":
					hour, h12 = v, fd.pat != "HH24"
				case "MI":
					mi = v
				case "SS":
					sec = v
				case "MS":
					us += v * 1000
				case "US":
					us += v
				}
			}
			break
		}
		if !matched {
			// A separator or other character of the template skips one
			// character of the input.
			f = f[1:]
			if in < len(s) {
				in++
			}
		}
	}
	if h12 {
		if hour < 1 || hour > 12 {
			return 0, sqlerr.New(sqlerr.InvalidDatetimeFormat, "hour \"%d\" is invalid for the 12-hour clock", hour)
		}
		hour %= 12
		if pm {
			hour += 12
		}
	}
	if iso && greg {
		return 0, sqlerr.New(sqlerr.InvalidDatetimeFormat, "invalid combination of date conventions").
			WithHint("Do not mix Gregorian and ISO week date conventions in a formatting template.")
	}
	if isoYear != 0 {
		year = isoYear
	}
	// makeDate counts BC years as negative, with no year 0; PostgreSQL
	// reads year 0 as 1 BC.
	if bc {
		year = -year
	}
	if year == 0 {
		year = -1
	}
	var days int64
	var err error
	if iso && isoWeek > 0 {
		days, err = isoWeekDate(year, isoWeek, isoDay)
	} else {
		days, err = makeDate(year, month, day)
	}
	if err != nil || hour > 23 || mi > 59 || sec > 59 {
		return 0, sqlerr.New(sqlerr.DatetimeFieldOverflow, "date/time field value out of range: %q", s)
	}
	offset := (tzh*60 + tzm) * 60 * 1e6
	if tzNeg {
		offset = -offset
	}
	return types.TimestampOfDays(days) + ((hour*60+mi)*60+sec)*1e6 + us - offset, nil
}

// isoWeekDate is the day (since 1970-01-01) of day d (1 = Monday, 0 read
// as 1) of ISO week w of ISO year y: week 1 is the week with January 4th.
// Weeks past the year's carry over, as in PostgreSQL. (Without a week the
// caller reads the year as a Gregorian one, as PostgreSQL does.)
func isoWeekDate(y, w, d int64) (int64, error) {
	jan4, err := makeDate(y, 1, 4)
	if err != nil {
		return 0, err
	}
	// 1970-01-01 was a Thursday: weekday 0 = Monday.
	weekday := ((jan4+3)%7 + 7) % 7
	monday := jan4 - weekday
	return monday + (w-1)*7 + max(d, 1) - 1, nil
}
