package types

// The date/time input of PostgreSQL 15, as its datetime.c reads text: the
// input is split into typed fields (splitDateTime), then the fields are
// decoded (decodeDateTime for dates and timestamps, decodeInterval for
// intervals). Reading every form the way PostgreSQL does, field by field,
// keeps its ambiguities resolved its way (DateStyle ISO, MDY).

// fieldType is the kind of one field of date/time text.
type fieldType uint8

const (
	fieldNumber  fieldType = iota + 1 // digits, maybe with one '.'
	fieldString                       // letters
	fieldDate                         // a date with separators, or a zone name
	fieldTime                         // digits with ':'
	fieldTZ                           // a sign then digits: an offset
	fieldSpecial                      // a sign then letters: -infinity
)

// dtField is one field: its text (letters lower-cased) and, for zone
// names, the text as written.
type dtField struct {
	typ  fieldType
	s    string
	orig string
}

// dtErr is a date/time input error, as PostgreSQL's DTERR codes.
type dtErr int8

const (
	dtOK              dtErr = 0
	dtTimeOnly        dtErr = 1 // a time without a date: bad format for dates
	dtBadFormat       dtErr = -1
	dtFieldOverflow   dtErr = -2
	dtMDFieldOverflow dtErr = -3
	dtTZDispOverflow  dtErr = -5
	dtBadZone         dtErr = -6 // an unknown zone name with punctuation
)

// PostgreSQL's work buffer sizes: input longer than these is refused.
const (
	maxDateFields     = 25
	dateTimeBufSize   = 128 + maxDateFields
	dateBufSize       = 128 + 1
	intervalBufSize   = 256
	tokenMaxLen       = 10 // keywords compare on their first 10 characters
	maxTZDisplacement = 15 // hours
)

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
func isAlpha(c byte) bool { return (c|0x20) >= 'a' && (c|0x20) <= 'z' }
func isAlnum(c byte) bool { return isDigit(c) || isAlpha(c) }
func isSpace(c byte) bool { return c == ' ' || (c >= '\t' && c <= '\r') }
func isPunct(c byte) bool { return c > ' ' && c < 0x7f && !isAlnum(c) }
func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 32
	}
	return c
}

// splitDateTime splits date/time text into fields as PostgreSQL's
// ParseDateTime does; bufSize bounds the total field text as its work
// buffer does.
func splitDateTime(str string, bufSize int) ([]dtField, dtErr) {
	fields := make([]dtField, 0, 6)
	used := 0
	var buf []byte
	i := 0
	app := func(c byte) bool {
		if used+1 >= bufSize {
			return false
		}
		used++
		buf = append(buf, c)
		return true
	}
	for i < len(str) {
		c := str[i]
		if isSpace(c) {
			i++
			continue
		}
		if len(fields) >= maxDateFields {
			return nil, dtBadFormat
		}
		buf = buf[:0]
		start := i
		var typ fieldType
		ok := true
		switch {
		case isDigit(c):
			for i < len(str) && isDigit(str[i]) && ok {
				ok = app(str[i])
				i++
			}
			switch {
			case i < len(str) && str[i] == ':':
				typ = fieldTime
				for i < len(str) && (isDigit(str[i]) || str[i] == ':' || str[i] == '.') && ok {
					ok = app(str[i])
					i++
				}
			case i < len(str) && (str[i] == '-' || str[i] == '/' || str[i] == '.'):
				delim := str[i]
				ok = app(delim)
				i++
				if i < len(str) && isDigit(str[i]) {
					typ = fieldDate
					if delim == '.' {
						typ = fieldNumber
					}
					for i < len(str) && isDigit(str[i]) && ok {
						ok = app(str[i])
						i++
					}
					if i < len(str) && str[i] == delim {
						typ = fieldDate
						for i < len(str) && (isDigit(str[i]) || str[i] == delim) && ok {
							ok = app(str[i])
							i++
						}
					}
				} else {
					typ = fieldDate
					for i < len(str) && (isAlnum(str[i]) || str[i] == delim) && ok {
						ok = app(lower(str[i]))
						i++
					}
				}
			default:
				typ = fieldNumber
			}
		case c == '.':
			ok = app(c)
			i++
			for i < len(str) && isDigit(str[i]) && ok {
				ok = app(str[i])
				i++
			}
			typ = fieldNumber
		case isAlpha(c):
			typ = fieldString
			for i < len(str) && isAlpha(str[i]) && ok {
				ok = app(lower(str[i]))
				i++
			}
			// Dates can have embedded '-', '/' or '.'; zone names '/',
			// '+', '-', '_' or ':'. Before a digit or '+', a keyword
			// stays a keyword.
			isDate := false
			if i < len(str) {
				switch n := str[i]; {
				case n == '-' || n == '/' || n == '.':
					isDate = true
				case n == '+' || isDigit(n):
					_, known := dateKeywords[keywordKey(string(buf))]
					isDate = !known
				}
			}
			if isDate {
				typ = fieldDate
				for ok {
					ok = app(lower(str[i]))
					i++
					if i >= len(str) {
						break
					}
					n := str[i]
					if !(n == '+' || n == '-' || n == '/' || n == '_' || n == '.' || n == ':' || isAlnum(n)) {
						break
					}
				}
			}
		case c == '+' || c == '-':
			ok = app(c)
			i++
			for i < len(str) && isSpace(str[i]) {
				i++
			}
			switch {
			case i < len(str) && isDigit(str[i]):
				typ = fieldTZ
				for i < len(str) && (isDigit(str[i]) || str[i] == ':' || str[i] == '.' || str[i] == '-') && ok {
					ok = app(str[i])
					i++
				}
			case i < len(str) && isAlpha(str[i]):
				typ = fieldSpecial
				for i < len(str) && isAlpha(str[i]) && ok {
					ok = app(lower(str[i]))
					i++
				}
			default:
				return nil, dtBadFormat
			}
		case isPunct(c):
			i++
			continue
		default:
			return nil, dtBadFormat
		}
		if !ok || !app(0) {
			return nil, dtBadFormat
		}
		fields = append(fields, dtField{typ: typ, s: string(buf[:len(buf)-1]), orig: str[start:i]})
	}
	return fields, dtOK
}

// keywordKey is the part of a word that PostgreSQL compares with its
// keywords: at most the first 10 characters.
func keywordKey(s string) string {
	if len(s) > tokenMaxLen {
		return s[:tokenMaxLen]
	}
	return s
}

// strtol reads an integer prefix of s as C's strtol does (leading space, a
// sign, digits): its value, the rest of s (all of s when there are no
// digits), and whether it overflowed the bits given.
func strtol(s string, bits uint) (v int64, rest string, overflow bool) {
	i := 0
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	j := i
	limit := uint64(1) << (bits - 1) // magnitude of the most negative value
	var mag uint64
	for j < len(s) && isDigit(s[j]) {
		switch {
		case overflow:
		case mag > limit/10+1:
			overflow = true
		default:
			mag = mag*10 + uint64(s[j]-'0')
			overflow = mag > limit
		}
		j++
	}
	if j == i {
		return 0, s, false
	}
	if !neg && mag == limit {
		overflow = true
	}
	if overflow {
		if neg {
			return -int64(limit - 1), s[j:], true
		}
		return int64(limit - 1), s[j:], true
	}
	if neg {
		return -int64(mag), s[j:], false
	}
	return int64(mag), s[j:], false
}

// atoi is C's atoi on a run of digits (the caller has checked them),
// saturating where C's would be undefined.
func atoi(s string) int {
	v, _, _ := strtol(s, 32)
	return int(v)
}
