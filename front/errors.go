package front

import (
	"fmt"

	"streamdb/sqlerr"
)

// eofToken is the token past the end of src.
func eofToken(src string) token {
	return token{kind: tkEOF, pos: len(src), end: len(src)}
}

// syntaxError returns PostgreSQL's "syntax error at or near" for t.
func syntaxError(src string, t token) *sqlerr.Error {
	if t.kind == tkEOF || t.pos >= len(src) {
		return sqlerr.New(sqlerr.SyntaxError, "syntax error at end of input").
			WithPosition(charPos(src, len(src)))
	}
	return sqlerr.New(sqlerr.SyntaxError, "syntax error at or near \"%s\"", src[t.pos:t.end]).
		WithPosition(charPos(src, t.pos))
}

// errorAt returns an error with the given code whose Position is t's.
func errorAt(src string, t token, code, format string, args ...any) *sqlerr.Error {
	return sqlerr.New(code, format, args...).WithPosition(charPos(src, t.pos))
}

// unsupported returns a 0A000 error naming the construct at t; add a hint
// that says what to write instead with WithHint.
func unsupported(src string, t token, what string, args ...any) *sqlerr.Error {
	return errorAt(src, t, sqlerr.FeatureNotSupported, "%s is not supported", fmt.Sprintf(what, args...))
}
