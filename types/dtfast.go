package types

// fastTimestamp reads the common ISO form "YYYY-MM-DD[ T]HH:MM:SS[.fff]"
// with an optional "Z" or "±HH[:MM]" (years 1000-9999), which is what
// stream events and the table changelog carry, without the general
// decoder. It gives the same value decodeDateTime does for that form; ok
// is false for anything else, which the caller reads in full.
func fastTimestamp(s string, withZone bool) (us int64, ok bool) {
	if len(s) < 19 || s[4] != '-' || s[7] != '-' || (s[10] != ' ' && s[10] != 'T') || s[13] != ':' || s[16] != ':' {
		return 0, false
	}
	num := func(a, b int) (int, bool) {
		n := 0
		for i := a; i < b; i++ {
			if !isDigit(s[i]) {
				return 0, false
			}
			n = n*10 + int(s[i]-'0')
		}
		return n, true
	}
	y, ok1 := num(0, 4)
	mo, ok2 := num(5, 7)
	d, ok3 := num(8, 10)
	h, ok4 := num(11, 13)
	mi, ok5 := num(14, 16)
	sec, ok6 := num(17, 19)
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) || y < 1000 || mo < 1 || mo > 12 || d < 1 ||
		d > daysInMonth(y, mo) || h > 23 || mi > 59 || sec > 59 {
		return 0, false
	}
	rest := s[19:]
	var fsec int64
	if len(rest) > 0 && rest[0] == '.' {
		i := 1
		for i < len(rest) && isDigit(rest[i]) {
			i++
		}
		if i == 1 || i > 10 {
			return 0, false
		}
		if i <= 7 {
			// Up to six digits are exact microseconds (what PostgreSQL's
			// rounding of the double gives too).
			for k := 1; k < 7; k++ {
				fsec *= 10
				if k < i {
					fsec += int64(rest[k] - '0')
				}
			}
		} else {
			f, e := parseFractionalSecond(rest[:i])
			if e != dtOK || f >= 1e6 {
				return 0, false
			}
			fsec = f
		}
		rest = rest[i:]
	}
	offset := 0 // seconds east
	switch {
	case rest == "" || rest == "Z":
	case len(rest) == 3 || (len(rest) == 6 && rest[3] == ':'):
		if rest[0] != '+' && rest[0] != '-' {
			return 0, false
		}
		oh, okh := num(len(s)-len(rest)+1, len(s)-len(rest)+3)
		om := 0
		okm := true
		if len(rest) == 6 {
			om, okm = num(len(s)-len(rest)+4, len(s))
		}
		if !okh || !okm || oh > maxTZDisplacement || om > 59 {
			return 0, false
		}
		offset = oh*3600 + om*60
		if rest[0] == '-' {
			offset = -offset
		}
	default:
		return 0, false
	}
	days := int64(date2j(y, mo, d) - postgresEpochJulian)
	us = days*86400e6 + (int64(h*3600+mi*60+sec))*1e6 + fsec
	if withZone {
		us -= int64(offset) * 1e6
	}
	return us, true
}
