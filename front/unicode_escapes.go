package front

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"streamdb/sqlerr"
)

// unicodeEscapes folds PostgreSQL's Unicode escape strings and identifiers,
// U&'d\0061t\+000061' and U&"d\0061t\+000061" with an optional
// UESCAPE 'c', into the plain string or quoted identifier they denote. The
// lexer reads U&'...' as the word u, the operator & and a string with no
// space between them; that is the only spelling folded (u & 'x' with spaces
// stays a bitwise and).
func unicodeEscapes(src string, toks []token) ([]token, error) {
	out := toks[:0:0]
	changed := false
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		if !(t.kind == tkWord && t.val == "u" && i+2 < len(toks) && toks[i+1].isOp("&") &&
			toks[i+1].pos == t.end && !toks[i+2].space && toks[i+2].pos == toks[i+1].end &&
			(isPlainString(src, toks[i+2]) || toks[i+2].kind == tkIdent)) {
			out = append(out, t)
			continue
		}
		body := toks[i+2]
		esc := byte('\\')
		end := body.end
		next := i + 3
		if next+1 < len(toks) && toks[next].isWord("uescape") {
			e := toks[next+1]
			if !isPlainString(src, e) || len(e.val) != 1 || !validEscapeChar(e.val[0]) {
				return nil, errorAt(src, e, sqlerr.SyntaxError, "invalid Unicode escape character at or near \"%s\"", src[e.pos:e.end])
			}
			esc, end, next = e.val[0], e.end, next+2
		}
		val, bad, err := decodeUnicodeEscapes(body.val, esc)
		if err != nil {
			// Point into the literal: its text starts 3 bytes after U&' or U&".
			return nil, err.WithPosition(charPos(src, min(body.pos+1+bad, body.end)))
		}
		out = append(out, token{kind: body.kind, val: val, pos: t.pos, end: end, space: t.space})
		i = next - 1
		changed = true
	}
	if !changed {
		return toks, nil
	}
	return out, nil
}

// isPlainString reports whether t is a '...' string (not E'...', $$...$$).
func isPlainString(src string, t token) bool {
	return t.kind == tkString && t.pos < len(src) && src[t.pos] == '\''
}

// validEscapeChar: UESCAPE takes any single character but a hex digit,
// '+', a quote or white space.
func validEscapeChar(c byte) bool {
	return !(isHex(c) || c == '+' || c == '\'' || c == '"' || c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f')
}

// decodeUnicodeEscapes replaces escXXXX and esc+XXXXXX by their code
// points (UTF-16 surrogate pairs combined) and esc esc by esc, as
// PostgreSQL does; bad is the byte offset of an error in s.
func decodeUnicodeEscapes(s string, esc byte) (val string, bad int, err *sqlerr.Error) {
	if strings.IndexByte(s, esc) < 0 {
		return s, 0, nil
	}
	var b strings.Builder
	pending := rune(0) // a high surrogate waiting for its low half
	pendingAt := 0
	hex := func(i, n int) (rune, bool) {
		if i+n > len(s) {
			return 0, false
		}
		for k := i; k < i+n; k++ {
			if !isHex(s[k]) {
				return 0, false
			}
		}
		v, _ := strconv.ParseUint(s[i:i+n], 16, 32)
		return rune(v), true
	}
	for i := 0; i < len(s); {
		if s[i] != esc {
			if pending != 0 {
				return "", pendingAt, sqlerr.New(sqlerr.SyntaxError, "invalid Unicode surrogate pair")
			}
			b.WriteByte(s[i])
			i++
			continue
		}
		if i+1 < len(s) && s[i+1] == esc {
			if pending != 0 {
				return "", pendingAt, sqlerr.New(sqlerr.SyntaxError, "invalid Unicode surrogate pair")
			}
			b.WriteByte(esc)
			i += 2
			continue
		}
		at := i
		var r rune
		var ok bool
		if r, ok = hex(i+1, 4); ok {
			i += 5
		} else if i+1 < len(s) && s[i+1] == '+' {
			if r, ok = hex(i+2, 6); ok {
				i += 8
			}
		}
		if !ok {
			return "", at, sqlerr.New(sqlerr.SyntaxError, "invalid Unicode escape").
				WithHint("Unicode escapes must be \\XXXX or \\+XXXXXX.")
		}
		switch {
		case pending != 0:
			if r < 0xdc00 || r > 0xdfff {
				return "", at, sqlerr.New(sqlerr.SyntaxError, "invalid Unicode surrogate pair")
			}
			r = 0x10000 + (pending-0xd800)<<10 + (r - 0xdc00)
			pending = 0
		case r >= 0xd800 && r <= 0xdbff:
			pending, pendingAt = r, at
			continue
		case r >= 0xdc00 && r <= 0xdfff:
			return "", at, sqlerr.New(sqlerr.SyntaxError, "invalid Unicode surrogate pair")
		}
		if r == 0 || r > utf8.MaxRune {
			return "", at, sqlerr.New(sqlerr.SyntaxError, "invalid Unicode escape value")
		}
		b.WriteRune(r)
	}
	if pending != 0 {
		return "", pendingAt, sqlerr.New(sqlerr.SyntaxError, "invalid Unicode surrogate pair")
	}
	return b.String(), 0, nil
}
