package front

import (
	"unicode/utf8"

	"streamdb/expr"
	"streamdb/sqlerr"
)

// likeEscapePass handles the ESCAPE strings the TiDB parser cannot read
// (it takes one byte at most):
//
//   - more than one character is PostgreSQL's error, 22025;
//   - one multi-byte character after a LIKE or ILIKE whose pattern is a
//     string literal is applied to the literal here, as like_escape
//     would, and the ESCAPE clause dropped: the pattern then has
//     backslash as its escape, LIKE's default;
//   - one multi-byte character after another pattern is refused (0A000).
func (r *rewriter) likeEscapePass() error {
	if !hasWord(r.toks, "escape") {
		return nil
	}
	out := make([]token, 0, len(r.toks))
	for i := 0; i < len(r.toks); i++ {
		t := r.toks[i]
		if !t.isWord("escape") || i+1 >= len(r.toks) || r.toks[i+1].kind != tkString || len(r.toks[i+1].val) <= 1 {
			out = append(out, t)
			continue
		}
		esc := r.toks[i+1]
		if utf8.RuneCountInString(esc.val) > 1 {
			return errorAt(r.src, esc, sqlerr.InvalidEscapeSequence, "invalid escape string").
				WithHint("Escape string must be empty or one character.")
		}
		n := len(out)
		if n < 2 || out[n-1].kind != tkString || !out[n-2].isWord("like", "ilike") {
			return errorAt(r.src, esc, sqlerr.FeatureNotSupported, "an ESCAPE character of more than one byte needs a string literal pattern").
				WithHint("Write the pattern as a string literal, or use an ASCII escape character.")
		}
		pattern, err := expr.LikeEscape(out[n-1].val, esc.val)
		if err != nil {
			return err
		}
		out[n-1].val = pattern
		i++ // the ESCAPE string
	}
	r.toks = out
	return nil
}
