package front

// pending holds tokens that a single-pass rewrite must emit later, just
// before a given index of its input: typically the ')' that closes a call
// it opened around an operand it still has to scan (so that rewrites
// inside the operand happen too). Rewrites register entries for ranges
// that nest inside the ranges of earlier entries, so the entry added last
// is always the first one due: a stack.
type pending struct {
	at   []int
	toks [][]token
}

// add registers toks to be emitted before input index at.
func (p *pending) add(at int, toks ...token) {
	p.at = append(p.at, at)
	p.toks = append(p.toks, toks)
}

// flush appends to out the entries due at or before input index i.
func (p *pending) flush(out []token, i int) []token {
	for n := len(p.at); n > 0 && p.at[n-1] <= i; n = len(p.at) {
		out = append(out, p.toks[n-1]...)
		p.at, p.toks = p.at[:n-1], p.toks[:n-1]
	}
	return out
}

// hasOp reports whether toks hold the operator op, so that a pass with
// nothing to do can skip copying them.
func hasOp(toks []token, op string) bool {
	for _, t := range toks {
		if t.kind == tkOp && t.val == op {
			return true
		}
	}
	return false
}

// hasWord reports whether toks hold the unquoted word w.
func hasWord(toks []token, w string) bool {
	for _, t := range toks {
		if t.kind == tkWord && t.val == w {
			return true
		}
	}
	return false
}
