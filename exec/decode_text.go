package exec

import (
	"strings"

	"streamdb/sqlerr"
)

// Text PostgreSQL cannot hold. A text value is valid UTF-8 without NUL:
// PostgreSQL refuses anything else at input, so a stream message or a row
// holding it is refused with PostgreSQL's SQLSTATE for the same input,
// never stored with U+FFFD in its place or sent back to clients as is.
// The messages are PostgreSQL's (report_invalid_encoding, and its JSON
// parser's for escapes).

// errInvalidUTF8 is the error for the invalid byte sequence that b starts
// with: 22021, naming the bytes of the character as far as its first byte
// says it goes (as PostgreSQL does).
func errInvalidUTF8(b []byte) error {
	n := utf8SeqLen(b[0])
	if n > len(b) {
		n = len(b)
	}
	var sb strings.Builder
	const hex = "0123456789abcdef"
	for i, c := range b[:n] {
		if i > 0 {
			sb.WriteByte(' ')
		}
		sb.WriteString("0x")
		sb.WriteByte(hex[c>>4])
		sb.WriteByte(hex[c&0xF])
	}
	return sqlerr.New(sqlerr.CharacterNotInRepertoire, "invalid byte sequence for encoding \"UTF8\": %s", sb.String())
}

// utf8SeqLen is the length of the UTF-8 sequence that a first byte
// announces (PostgreSQL's pg_utf_mblen); 1 for a byte that starts none.
func utf8SeqLen(c byte) int {
	switch {
	case c&0xE0 == 0xC0:
		return 2
	case c&0xF0 == 0xE0:
		return 3
	case c&0xF8 == 0xF0:
		return 4
	}
	return 1
}

// errNULEscape is PostgreSQL's error for a JSON \u0000 read as text.
func errNULEscape() error {
	return sqlerr.New(sqlerr.UntranslatableCharacter, `unsupported Unicode escape sequence: \u0000 cannot be converted to text`)
}

// errSurrogate is PostgreSQL's error for a JSON \u escape of half a
// UTF-16 surrogate pair.
func errSurrogate(detail string) error {
	return sqlerr.New(sqlerr.InvalidTextRepresentation, "invalid input syntax for type json: %s", detail)
}

// errNULText is the error for text holding a NUL byte (22021, as
// PostgreSQL's input of such text from a client).
func errNULText() error {
	return sqlerr.New(sqlerr.CharacterNotInRepertoire, "invalid byte sequence for encoding \"UTF8\": 0x00")
}
