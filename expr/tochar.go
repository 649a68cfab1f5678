package expr

import (
	"fmt"
	"strings"

	"streamdb/sqlerr"
	"streamdb/types"
)

// to_char(timestamp, format) and to_char(date, format): the date and time
// template patterns of PostgreSQL's to_char (YYYY, YY, MM, DD, DDD, HH24,
// HH12, HH, MI, SS, MS, US, AM/PM, Mon, Month, Dy, Day in their case
// variants, TZ; FM before a pattern drops its padding) with "quoted text"
// copied as is; any other character is copied too, as PostgreSQL does. Times are in UTC, the zone streamdb
// shows timestamptz values in.
func toChar(name string, args []Expr) (Expr, error) {
	if len(args) != 2 {
		return nil, wrongArgs(name, args)
	}
	a := []Expr{args[0], args[1]}
	var err error
	switch args[0].Type() {
	case types.Timestamp, types.Timestamptz:
	case types.Date, types.Unknown:
		if a[0], err = Cast(args[0], types.Timestamp); err != nil {
			return nil, err
		}
	default:
		return nil, notSupportedToChar(args[0].Type())
	}
	if a[1], err = Cast(args[1], types.Text); err != nil {
		return nil, err
	}
	withZone := args[0].Type() == types.Timestamptz
	return &Func{Name: name, Args: a, T: types.Text, Fn: strict(func(v []types.Datum) (types.Datum, error) {
		return types.NewString(formatToChar(v[0], v[1].S, withZone)), nil
	})}, nil
}

func notSupportedToChar(t types.Type) error {
	return sqlerr.New(sqlerr.FeatureNotSupported, "to_char of %s is not supported: only timestamps and dates are", t)
}

// toCharPatterns are the template patterns, longest first so that HH24
// wins over HH.
var toCharPatterns = []string{"HH24", "HH12", "YYYY", "MONTH", "Month", "month", "DDD", "DAY", "Day", "day",
	"MON", "Mon", "mon", "HH", "MI", "SS", "MS", "US", "YY", "MM", "DD", "AM", "PM", "am", "pm", "DY", "Dy", "dy", "TZ", "tz"}

func formatToChar(d types.Datum, format string, withZone bool) string {
	t := d.Time()
	var b strings.Builder
	fm := false
	// num writes n zero-padded to width digits, unpadded after FM.
	num := func(n, width int) {
		if fm {
			fmt.Fprintf(&b, "%d", n)
		} else {
			fmt.Fprintf(&b, "%0*d", width, n)
		}
	}
	word := func(s, pattern string) {
		if !fm {
			s = fmt.Sprintf("%-9s", s)
		}
		b.WriteString(caseLike(s, pattern))
	}
	for i := 0; i < len(format); {
		if strings.HasPrefix(format[i:], "FM") || strings.HasPrefix(format[i:], "fm") {
			fm = true
			i += 2
			continue
		}
		if format[i] == '"' {
			j := strings.IndexByte(format[i+1:], '"')
			if j < 0 {
				b.WriteString(format[i+1:])
				break
			}
			b.WriteString(format[i+1 : i+1+j])
			i += j + 2
			continue
		}
		matched := ""
		for _, p := range toCharPatterns {
			if strings.HasPrefix(format[i:], p) {
				matched = p
				break
			}
		}
		if matched == "" {
			b.WriteByte(format[i])
			i++
			fm = false
			continue
		}
		i += len(matched)
		h12 := t.Hour() % 12
		if h12 == 0 {
			h12 = 12
		}
		switch matched {
		case "YYYY":
			num(t.Year(), 4)
		case "YY":
			num(t.Year()%100, 2)
		case "MM":
			num(int(t.Month()), 2)
		case "DD":
			num(t.Day(), 2)
		case "DDD":
			num(t.YearDay(), 3)
		case "HH24":
			num(t.Hour(), 2)
		case "HH12", "HH":
			num(h12, 2)
		case "MI":
			num(t.Minute(), 2)
		case "SS":
			num(t.Second(), 2)
		case "MS":
			num(t.Nanosecond()/1e6, 3)
		case "US":
			num(t.Nanosecond()/1e3, 6)
		case "AM", "PM", "am", "pm":
			m := "AM"
			if t.Hour() >= 12 {
				m = "PM"
			}
			if matched[0] == 'a' || matched[0] == 'p' {
				m = strings.ToLower(m)
			}
			b.WriteString(m)
		case "MONTH", "Month", "month":
			word(t.Month().String(), matched)
		case "MON", "Mon", "mon":
			b.WriteString(caseLike(t.Month().String()[:3], matched))
		case "DAY", "Day", "day":
			word(t.Weekday().String(), matched)
		case "DY", "Dy", "dy":
			b.WriteString(caseLike(t.Weekday().String()[:3], matched))
		case "TZ", "tz":
			if withZone {
				b.WriteString(caseLike("UTC", matched))
			}
		}
		fm = false
	}
	return b.String()
}

// caseLike writes s (capitalised) in the case of the pattern: all upper,
// all lower, or capitalised.
func caseLike(s, pattern string) string {
	switch {
	case pattern == strings.ToUpper(pattern):
		return strings.ToUpper(s)
	case pattern == strings.ToLower(pattern):
		return strings.ToLower(s)
	}
	return s
}
