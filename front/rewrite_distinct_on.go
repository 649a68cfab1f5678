package front

// distinctOnPass rewrites SELECT DISTINCT ON (e1, ...) list into
// SELECT streamdb_distinct_on(e1, ...), list, which the TiDB parser reads:
// the binder takes the first field back as the DISTINCT ON expressions
// (DistinctOnFunc). An empty DISTINCT ON () is a syntax error, as in
// PostgreSQL.
func (r *rewriter) distinctOnPass() error {
	if !hasWord(r.toks, "distinct") {
		return nil
	}
	for i := 0; i+2 < len(r.toks); i++ {
		t := r.toks[i]
		if !t.isWord("distinct") || !r.toks[i+1].isWord("on") || !r.toks[i+2].isOp("(") ||
			i == 0 || !r.toks[i-1].isWord("select") {
			continue
		}
		closing := matchParen(r.toks, i+2)
		if closing < 0 {
			return syntaxError(r.src, tokenOrEOF(r.src, r.toks, len(r.toks)))
		}
		if closing == i+3 {
			return syntaxError(r.src, r.toks[closing])
		}
		call := []token{synth(tkWord, DistinctOnFunc, t, t.space), synth(tkOp, "(", t, false)}
		args := withSpace(r.toks[i+3:closing], false)
		tail := []token{synth(tkOp, ")", r.toks[closing], false), synth(tkOp, ",", r.toks[closing], false)}
		r.toks = concat(r.toks[:i], call, args, tail, r.toks[closing+1:])
		if next := i + len(call) + len(args) + len(tail); next < len(r.toks) {
			r.toks[next].space = true
		}
	}
	return nil
}
