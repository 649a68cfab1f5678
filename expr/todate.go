package expr

import (
	"strings"
	"time"

	"streamdb/sqlerr"
)

// toDateFields are the template patterns to_date and to_timestamp read,
// longest first, with the most digits each takes.
var toDateFields = []struct {
	pat    string
	digits int
}{{"HH24", 2}, {"HH12", 2}, {"YYYY", 4}, {"MONTH", 0}, {"MON", 0}, {"HH", 2}, {"MI", 2}, {"SS", 2},
	{"MS", 3}, {"US", 6}, {"MM", 2}, {"DD", 2}, {"AM", 0}, {"PM", 0}}

// parseDateTime reads s by the to_date/to_timestamp template format (the
// numeric fields YYYY MM DD HH24 HH12 HH MI SS MS US, the names MONTH and
// MON in any case, AM/PM, FM, "quoted text"; other characters skip one
// character of s) into microseconds since 1970-01-01 UTC.
func parseDateTime(s, format string) (int64, error) {
	year, month, day := int64(1), int64(1), int64(1)
	var hour, mi, sec, us int64
	pm, h12 := false, false
	in := 0
	f := format
	for len(f) > 0 {
		if strings.HasPrefix(strings.ToUpper(f), "FM") {
			f = f[2:]
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
			for in < len(s) && s[in] == ' ' {
				in++
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
				month = int64(m)
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
					month = v
				case "DD":
					day = v
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
	days, err := makeDate(year, month, day)
	if err != nil || hour > 23 || mi > 59 || sec > 59 {
		return 0, sqlerr.New(sqlerr.DatetimeFieldOverflow, "date/time field value out of range: %q", s)
	}
	return days*usPerDay + ((hour*60+mi)*60+sec)*1e6 + us, nil
}
