package exec

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"unicode/utf16"
	"unicode/utf8"
)

// A small JSON lexer for the flat objects streams carry. It validates as it
// goes (RFC 8259 grammar: no trailing commas, no leading zeros, no bare
// control characters in strings) and never allocates: strings come back as
// slices of the input, or of a caller's scratch buffer when they hold
// escapes or non-ASCII bytes. Unlike encoding/json it does not replace
// what cannot be text (invalid UTF-8, \u0000, unpaired surrogates) with
// U+FFFD: such a string is an error (decode_text.go), as PostgreSQL refuses it.

// maxJSONDepth bounds nesting inside skipped values.
const maxJSONDepth = 1000

var errJSONEnd = errors.New("unexpected end of JSON input")

func jsonSyntax(data []byte, p int, what string) error {
	if p >= len(data) {
		return errJSONEnd
	}
	return fmt.Errorf("invalid character %q %s at offset %d", data[p], what, p)
}

func skipWS(data []byte, p int) int {
	for p < len(data) {
		switch data[p] {
		case ' ', '\t', '\n', '\r':
			p++
		default:
			return p
		}
	}
	return p
}

// scanString reads the string whose opening quote is at data[p]. It returns
// its raw content (between the quotes), the offset after the closing quote,
// and whether the content needs unquoteInto (escapes or non-ASCII bytes).
func scanString(data []byte, p int) (raw []byte, next int, complex bool, err error) {
	start := p + 1
	for i := start; i < len(data); i++ {
		// Skip plain bytes 8 at a time (no quote, backslash, control
		// character or non-ASCII byte among them), then to the first
		// byte of the word that is not plain.
		for i+8 <= len(data) {
			if m := specialBytes(binary.LittleEndian.Uint64(data[i:])); m != 0 {
				i += bits.TrailingZeros64(m) >> 3
				break
			}
			i += 8
		}
		if i >= len(data) {
			break
		}
		c := data[i]
		switch {
		case c == '"':
			return data[start:i], i + 1, complex, nil
		case c == '\\':
			complex = true
			i++
			if i >= len(data) {
				return nil, 0, false, errJSONEnd
			}
			switch data[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(data) {
					return nil, 0, false, errJSONEnd
				}
				for _, h := range data[i+1 : i+5] {
					if hexVal(h) < 0 {
						return nil, 0, false, fmt.Errorf("invalid character %q in \\u escape", h)
					}
				}
				i += 4
			default:
				return nil, 0, false, fmt.Errorf("invalid character %q in string escape code", data[i])
			}
		case c < 0x20:
			return nil, 0, false, fmt.Errorf("invalid character %q in string literal", c)
		case c >= utf8.RuneSelf:
			complex = true
		}
	}
	return nil, 0, false, errJSONEnd
}

// specialBytes returns the high bit of each of the 8 bytes of w (the
// first in memory lowest) that is '"', '\\', below 0x20 or at or above
// 0x80: the bytes scanString must look at one by one. Each test sets a
// byte's high bit where it matches (the classic "has zero byte" trick:
// (x - 0x01..) & ^x & 0x80.. is nonzero exactly when some byte of x is
// zero). A borrow can also mark bytes after a match, never before one, so
// the lowest bit set is the first such byte.
func specialBytes(w uint64) uint64 {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	quote := w ^ (ones * '"')
	backslash := w ^ (ones * '\\')
	hasQuote := (quote - ones) & ^quote
	hasBackslash := (backslash - ones) & ^backslash
	hasControl := (w - ones*0x20) & ^w // some byte below 0x20
	return (hasQuote | hasBackslash | hasControl | w) & highs
}

func hexVal(c byte) rune {
	switch {
	case c >= '0' && c <= '9':
		return rune(c - '0')
	case c >= 'a' && c <= 'f':
		return rune(c - 'a' + 10)
	case c >= 'A' && c <= 'F':
		return rune(c - 'A' + 10)
	}
	return -1
}

func hex4(b []byte) rune {
	return hexVal(b[0])<<12 | hexVal(b[1])<<8 | hexVal(b[2])<<4 | hexVal(b[3])
}

// unquoteInto appends the decoded content of a string scanned by scanString
// (which validated its escapes) to dst. Content that is no PostgreSQL text
// is an error, never replaced (see decode_text.go); dst then holds what
// came before it. allowNUL lets \u0000 through, for table changelogs that
// servers before this check wrote.
func unquoteInto(dst, raw []byte, allowNUL bool) ([]byte, error) {
	for i := 0; i < len(raw); {
		c := raw[i]
		switch {
		case c == '\\':
			e := raw[i+1]
			i += 2
			switch e {
			case 'b':
				dst = append(dst, '\b')
			case 'f':
				dst = append(dst, '\f')
			case 'n':
				dst = append(dst, '\n')
			case 'r':
				dst = append(dst, '\r')
			case 't':
				dst = append(dst, '\t')
			case 'u':
				r, next, err := unicodeEscape(raw, i-2, allowNUL)
				if err != nil {
					return dst, err
				}
				i = next
				dst = utf8.AppendRune(dst, r)
			default: // '"', '\\', '/'
				dst = append(dst, e)
			}
		case c < utf8.RuneSelf:
			dst = append(dst, c)
			i++
		default:
			r, n := utf8.DecodeRune(raw[i:])
			if r == utf8.RuneError && n == 1 {
				return dst, errInvalidUTF8(raw[i:])
			}
			dst = append(dst, raw[i:i+n]...)
			i += n
		}
	}
	return dst, nil
}

// unicodeEscape decodes the \u escape at raw[i:] (escapes validated by
// scanString), and the low half of a surrogate pair after it. It returns
// the character and the offset after the escape(s), or PostgreSQL's error
// for an unpaired surrogate, or for \u0000 unless allowNUL.
func unicodeEscape(raw []byte, i int, allowNUL bool) (rune, int, error) {
	r := hex4(raw[i+2:])
	i += 6
	switch {
	case r == 0 && !allowNUL:
		return 0, 0, errNULEscape()
	case utf16.IsSurrogate(r):
		if r >= 0xDC00 || i+6 > len(raw) || raw[i] != '\\' || raw[i+1] != 'u' {
			return 0, 0, errSurrogate("Unicode low surrogate must follow a high surrogate")
		}
		lo := hex4(raw[i+2:])
		if lo >= 0xD800 && lo < 0xDC00 {
			return 0, 0, errSurrogate("Unicode high surrogate must not follow a high surrogate")
		}
		if r = utf16.DecodeRune(r, lo); r == utf8.RuneError {
			return 0, 0, errSurrogate("Unicode low surrogate must follow a high surrogate")
		}
		i += 6
	}
	return r, i, nil
}

// checkJSONText validates the raw content of a string that is not read as
// a column's text (a key, a field no column reads): as PostgreSQL's jsonb
// input, it refuses invalid UTF-8, unpaired surrogate escapes and \u0000
// anywhere in a message. It allocates nothing.
func checkJSONText(raw []byte) error {
	for i := 0; i < len(raw); {
		switch c := raw[i]; {
		case c == '\\' && raw[i+1] == 'u':
			_, next, err := unicodeEscape(raw, i, false)
			if err != nil {
				return err
			}
			i = next
		case c == '\\':
			i += 2
		case c < utf8.RuneSelf:
			i++
		default:
			r, n := utf8.DecodeRune(raw[i:])
			if r == utf8.RuneError && n == 1 {
				return errInvalidUTF8(raw[i:])
			}
			i += n
		}
	}
	return nil
}

// scanNumber reads the number starting at data[p]: -?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?
// It returns the offset after it and whether it is a plain integer.
func scanNumber(data []byte, p int) (next int, integer bool, err error) {
	i := p
	if i < len(data) && data[i] == '-' {
		i++
	}
	digits := func(what string) error {
		if i >= len(data) || data[i] < '0' || data[i] > '9' {
			return jsonSyntax(data, i, what)
		}
		for i < len(data) && data[i] >= '0' && data[i] <= '9' {
			i++
		}
		return nil
	}
	switch {
	case i < len(data) && data[i] == '0':
		i++
	default:
		if err := digits("in numeric literal"); err != nil {
			return 0, false, err
		}
	}
	integer = true
	if i < len(data) && data[i] == '.' {
		i++
		integer = false
		if err := digits("after decimal point in numeric literal"); err != nil {
			return 0, false, err
		}
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		i++
		integer = false
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		if err := digits("in exponent of numeric literal"); err != nil {
			return 0, false, err
		}
	}
	return i, integer, nil
}

// scanLiteral checks that data[p:] starts with lit (true, false, null).
func scanLiteral(data []byte, p int, lit string) (int, error) {
	if len(data)-p < len(lit) || string(data[p:p+len(lit)]) != lit {
		return 0, fmt.Errorf("invalid literal at offset %d (expecting %s)", p, lit)
	}
	return p + len(lit), nil
}

// skipValue validates and steps over the value starting at data[p]
// (whitespace already skipped), nested objects and arrays included.
func skipValue(data []byte, p, depth int) (int, error) {
	if p >= len(data) {
		return 0, errJSONEnd
	}
	switch c := data[p]; {
	case c == '"':
		raw, next, complex, err := scanString(data, p)
		if err == nil && complex {
			err = checkJSONText(raw)
		}
		return next, err
	case c == '-' || (c >= '0' && c <= '9'):
		next, _, err := scanNumber(data, p)
		return next, err
	case c == 't':
		return scanLiteral(data, p, "true")
	case c == 'f':
		return scanLiteral(data, p, "false")
	case c == 'n':
		return scanLiteral(data, p, "null")
	case c == '{' || c == '[':
		if depth >= maxJSONDepth {
			return 0, fmt.Errorf("JSON nested too deeply")
		}
		return skipCompound(data, p, depth+1)
	}
	return 0, jsonSyntax(data, p, "looking for beginning of value")
}

// skipCompound steps over the object or array opening at data[p].
func skipCompound(data []byte, p, depth int) (int, error) {
	object := data[p] == '{'
	closer := byte(']')
	if object {
		closer = '}'
	}
	p = skipWS(data, p+1)
	if p < len(data) && data[p] == closer {
		return p + 1, nil
	}
	for {
		var err error
		if object {
			if _, p, _, err = memberKey(data, p); err != nil {
				return 0, err
			}
		}
		if p, err = skipValue(data, p, depth); err != nil {
			return 0, err
		}
		var done bool
		if p, done, err = nextMember(data, p, closer, "after value"); err != nil || done {
			return p, err
		}
	}
}

// memberKey reads the key of the object member at data[p] and the colon
// after it, and returns the key's raw text (complex: it has escapes or
// non-ASCII bytes) and the offset of the member's value.
func memberKey(data []byte, p int) (raw []byte, next int, complex bool, err error) {
	if p >= len(data) || data[p] != '"' {
		return nil, 0, false, jsonSyntax(data, p, "looking for beginning of object key string")
	}
	if raw, p, complex, err = scanString(data, p); err != nil {
		return nil, 0, false, err
	}
	if complex {
		if err = checkJSONText(raw); err != nil {
			return nil, 0, false, err
		}
	}
	p = skipWS(data, p)
	if p >= len(data) || data[p] != ':' {
		return nil, 0, false, jsonSyntax(data, p, "after object key")
	}
	return raw, skipWS(data, p+1), complex, nil
}

// nextMember steps over what follows a member or element ending before
// data[p]: a comma (it returns the offset of the next one) or closer (done,
// and the offset after it). what names the place in a syntax error.
func nextMember(data []byte, p int, closer byte, what string) (next int, done bool, err error) {
	p = skipWS(data, p)
	switch {
	case p >= len(data):
		return 0, false, errJSONEnd
	case data[p] == ',':
		return skipWS(data, p+1), false, nil
	case data[p] == closer:
		return p + 1, true, nil
	}
	return 0, false, jsonSyntax(data, p, what)
}
