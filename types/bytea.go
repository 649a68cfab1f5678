package types

import (
	"encoding/hex"
	"strings"

	"streamdb/sqlerr"
)

// NewBytes is a bytea value; b holds its raw bytes.
func NewBytes(b string) Datum { return Datum{K: KindBytes, S: b} }

// FormatBytea is bytea's text output in PostgreSQL's default hex format
// (bytea_output = hex): \x followed by two lower-case hex digits a byte.
func FormatBytea(b string) string {
	return `\x` + hex.EncodeToString([]byte(b))
}

// ParseBytea reads bytea's text input: the hex format (\x then pairs of
// hex digits, whitespace allowed between pairs) or the escape format
// (bytes as they are, \\ for a backslash, \ooo for an octal byte).
// Malformed escape input is 22P02 and malformed hex 22023, as in
// PostgreSQL.
func ParseBytea(s string) (Datum, error) {
	if strings.HasPrefix(s, `\x`) || strings.HasPrefix(s, `\X`) {
		out := make([]byte, 0, (len(s)-2)/2)
		for i := 2; i < len(s); {
			c := s[i]
			if c == ' ' || c == '\t' || c == '\n' || c == '\r' {
				i++
				continue
			}
			hi, ok := hexDigit(c)
			if !ok {
				return Null, sqlerr.New(sqlerr.InvalidParameterValue, "invalid hexadecimal digit: %q", string(c))
			}
			if i+1 >= len(s) {
				return Null, sqlerr.New(sqlerr.InvalidParameterValue, "invalid hexadecimal data: odd number of digits")
			}
			lo, ok := hexDigit(s[i+1])
			if !ok {
				if s[i+1] == ' ' || s[i+1] == '\t' || s[i+1] == '\n' || s[i+1] == '\r' {
					return Null, sqlerr.New(sqlerr.InvalidParameterValue, "invalid hexadecimal data: odd number of digits")
				}
				return Null, sqlerr.New(sqlerr.InvalidParameterValue, "invalid hexadecimal digit: %q", string(s[i+1]))
			}
			out = append(out, hi<<4|lo)
			i += 2
		}
		return NewBytes(string(out)), nil
	}
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); {
		if s[i] != '\\' {
			out = append(out, s[i])
			i++
			continue
		}
		switch {
		case i+1 < len(s) && s[i+1] == '\\':
			out = append(out, '\\')
			i += 2
		case i+3 < len(s) && isOctal(s[i+1], '3') && isOctal(s[i+2], '7') && isOctal(s[i+3], '7'):
			out = append(out, (s[i+1]-'0')<<6|(s[i+2]-'0')<<3|(s[i+3]-'0'))
			i += 4
		default:
			return Null, sqlerr.New(sqlerr.InvalidTextRepresentation, "invalid input syntax for type bytea")
		}
	}
	return NewBytes(string(out)), nil
}

func hexDigit(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

func isOctal(c, max byte) bool { return c >= '0' && c <= max }
