package types

import (
	"strings"

	"streamdb/sqlerr"
)

// parseBool reads BOOLEAN text as PostgreSQL's boolin does: surrounding
// white space is dropped, and any case-insensitive prefix of true, false,
// yes or no, "on", a prefix of "off" of at least two letters, "1" or "0"
// is a value ("o" alone could be on or off, so it is not).
func parseBool(s string) (Datum, error) {
	v := strings.TrimFunc(s, func(r rune) bool { return r < 0x80 && isSpace(byte(r)) })
	prefixOf := func(word string, minLen int) bool {
		return len(v) >= minLen && len(v) <= len(word) && strings.EqualFold(v, word[:len(v)])
	}
	if v != "" {
		switch lower(v[0]) {
		case 't':
			if prefixOf("true", 1) {
				return NewBool(true), nil
			}
		case 'f':
			if prefixOf("false", 1) {
				return NewBool(false), nil
			}
		case 'y':
			if prefixOf("yes", 1) {
				return NewBool(true), nil
			}
		case 'n':
			if prefixOf("no", 1) {
				return NewBool(false), nil
			}
		case 'o':
			if prefixOf("on", 2) {
				return NewBool(true), nil
			}
			if prefixOf("off", 2) {
				return NewBool(false), nil
			}
		case '1':
			if len(v) == 1 {
				return NewBool(true), nil
			}
		case '0':
			if len(v) == 1 {
				return NewBool(false), nil
			}
		}
	}
	return Null, sqlerr.New(sqlerr.InvalidTextRepresentation, "invalid input syntax for type boolean: \"%s\"", s)
}
