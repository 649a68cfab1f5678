package front

import "strings"

// rendered is token text handed to the TiDB parser, with the map back to
// the original text.
type rendered struct {
	text   string
	toks   []token // the tokens rendered
	starts []int   // byte offset of each token in text
	params []int   // $n of each ? marker, in text order
}

// render writes toks as text for the TiDB parser. Words come out lower-case,
// strings as standard '...' literals and $n parameters as ? markers. A space
// separates tokens where the original had one, and wherever two tokens would
// otherwise run together into one.
func render(toks []token) rendered {
	var b strings.Builder
	r := rendered{toks: toks, starts: make([]int, len(toks))}
	for i, t := range toks {
		if i > 0 && (t.space || needSpace(toks[i-1], t)) {
			b.WriteByte(' ')
		}
		r.starts[i] = b.Len()
		b.WriteString(tokenText(t))
		if t.kind == tkParam {
			r.params = append(r.params, t.n)
		}
	}
	r.text = b.String()
	return r
}

// tokenText is the text of t as the TiDB parser must see it.
func tokenText(t token) string {
	switch t.kind {
	case tkIdent:
		return `"` + strings.ReplaceAll(t.val, `"`, `""`) + `"`
	case tkString:
		return quoteString(t.val)
	case tkParam:
		return "?"
	}
	return t.val
}

// needSpace reports whether a and b would lex differently without a space
// between them.
func needSpace(a, b token) bool {
	wordy := func(t token) bool { return t.kind != tkOp }
	if wordy(a) && wordy(b) {
		return true
	}
	punct := func(t token) bool { return t.isOp("(", ")", ",", ".", ";", "[", "]") }
	return a.kind == tkOp && b.kind == tkOp && !punct(a) && !punct(b)
}

// tokenAt returns the index of the token that covers byte offset off of the
// rendered text, or len(toks) if off is at or past its end.
func (r rendered) tokenAt(off int) int {
	if off >= len(r.text) {
		return len(r.toks)
	}
	i := 0
	for j, s := range r.starts {
		if s <= off {
			i = j
		}
	}
	return i
}
