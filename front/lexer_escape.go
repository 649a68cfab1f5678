package front

import (
	"strconv"
	"strings"

	"streamdb/sqlerr"
)

// unicodeEscape writes the code point v of a \u or \U escape of an E'...'
// string, which began at escStart and ends at l.i, as PostgreSQL's scanner
// does: a high surrogate must be followed by the \u escape of a low one,
// the pair making one character; NUL, a lone surrogate and values past
// U+10FFFF are syntax errors (42601).
func (l *lexer) unicodeEscape(b *strings.Builder, v uint64, escStart int) error {
	switch {
	case v == 0 || v > 0x10FFFF:
		return l.escapeError("invalid Unicode escape value", escStart, l.i)
	case v >= 0xDC00 && v <= 0xDFFF:
		return l.escapeError("invalid Unicode surrogate pair", escStart, l.i)
	case v >= 0xD800 && v <= 0xDBFF:
		j := l.i
		if j+6 <= len(l.src) && l.src[j] == '\\' && l.src[j+1] == 'u' {
			if lo, err := strconv.ParseUint(l.src[j+2:j+6], 16, 32); err == nil && lo >= 0xDC00 && lo <= 0xDFFF {
				l.i = j + 6
				b.WriteRune(rune(0x10000 + (v-0xD800)<<10 + (lo - 0xDC00)))
				return nil
			}
		}
		return l.escapeError("invalid Unicode surrogate pair", j, min(j+1, len(l.src)))
	}
	b.WriteRune(rune(v))
	return nil
}

// escapeError is a syntax error at the source text src[from:to].
func (l *lexer) escapeError(msg string, from, to int) error {
	if l.tolerant {
		return nil
	}
	return sqlerr.New(sqlerr.SyntaxError, "%s at or near \"%s\"", msg, l.src[from:to]).
		WithPosition(charPos(l.src, from))
}
