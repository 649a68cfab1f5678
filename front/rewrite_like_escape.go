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
//   - one multi-byte character after another pattern, or an escape that
//     is not a string literal ($1, a column), makes the pattern
//     like_escape(pattern, escape), as PostgreSQL defines ESCAPE, and
//     drops the ESCAPE clause.
func (r *rewriter) likeEscapePass() error {
	if !hasWord(r.toks, "escape") {
		return nil
	}
	out := make([]token, 0, len(r.toks))
	for i := 0; i < len(r.toks); i++ {
		t := r.toks[i]
		if t.isWord("escape") && i+1 < len(r.toks) && r.toks[i+1].kind != tkString {
			if o, end, ok := likeEscapeCall(out, r.toks, i); ok {
				out, i = o, end
				continue
			}
		}
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
			if o, end, ok := likeEscapeCall(out, r.toks, i); ok {
				out, i = o, end
				continue
			}
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

// likeEscapeCall rewrites "LIKE pattern ESCAPE escape", the ESCAPE at
// toks[i] and the pattern the tokens out ends with, into "LIKE
// like_escape(pattern, escape)". It returns the new out and the index
// of the escape's last token; ok is false when the pattern has no LIKE
// or ILIKE before it at its level, or the escape is no operand.
func likeEscapeCall(out, toks []token, i int) ([]token, int, bool) {
	like := -1
	depth := 0
	for j := len(out) - 1; j >= 0 && like < 0; j-- {
		switch {
		case out[j].isOp(")", "]"):
			depth++
		case out[j].isOp("(", "["):
			if depth == 0 {
				return nil, 0, false
			}
			depth--
		case depth == 0 && out[j].isWord("like", "ilike"):
			like = j
		case depth == 0 && (out[j].isOp(",", ";") || out[j].kind == tkWord && reserved[out[j].val] && !out[j].isWord("null", "true", "false")):
			return nil, 0, false
		}
	}
	if like < 0 || like == len(out)-1 {
		return nil, 0, false
	}
	// The escape: an operand, with casts, calls and subscripts.
	end := i
	depth = 0
	for j := i + 1; j < len(toks); j++ {
		t := toks[j]
		if t.isOp("(", "[") {
			depth++
		} else if t.isOp(")", "]") {
			if depth == 0 {
				break
			}
			depth--
		} else if depth == 0 && (t.kind == tkOp && !t.isOp("::", ".") || t.kind == tkWord && (reserved[t.val] || operatorWords[t.val]) && !t.isWord("null")) {
			break
		}
		end = j
	}
	if end == i {
		return nil, 0, false
	}
	pattern := append([]token(nil), out[like+1:]...)
	at := toks[i]
	o := append(out[:like+1], synth(tkWord, "like_escape", pattern[0], true), synth(tkOp, "(", at, false))
	o = append(o, withSpace(pattern, false)...)
	o = append(o, synth(tkOp, ",", at, false))
	o = append(o, withSpace(toks[i+1:end+1], true)...)
	o = append(o, synth(tkOp, ")", at, false))
	return o, end, true
}
