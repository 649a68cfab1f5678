package front

// betweenPass rewrites PostgreSQL's BETWEEN SYMMETRIC, which the TiDB
// parser lacks, into a plain BETWEEN over the bounds in order:
//
//	x [NOT] BETWEEN SYMMETRIC a AND b
//	  ->  x [NOT] BETWEEN (CASE WHEN (a) <= (b) THEN (a) WHEN (a) > (b) THEN (b) END)
//	                  AND (CASE WHEN (a) <= (b) THEN (b) WHEN (a) > (b) THEN (a) END)
//
// A NULL bound makes both bounds NULL, so the result is NULL as
// PostgreSQL's (x BETWEEN a AND b) OR (x BETWEEN b AND a) is then (for
// any x, either side is NULL and the other NULL or false). BETWEEN
// ASYMMETRIC is plain BETWEEN. The bounds' tokens are repeated, so later
// passes rewrite each copy as usual.
func (r *rewriter) betweenPass() error {
	if !hasWord(r.toks, "symmetric") && !hasWord(r.toks, "asymmetric") {
		return nil
	}
	out := make([]token, 0, len(r.toks)+32)
	for i := 0; i < len(r.toks); i++ {
		t := r.toks[i]
		if !t.isWord("between") || i+1 >= len(r.toks) || !r.toks[i+1].isWord("symmetric", "asymmetric") {
			out = append(out, t)
			continue
		}
		out = append(out, t)
		if r.toks[i+1].isWord("asymmetric") {
			i++
			continue
		}
		start := i + 2
		and := betweenLowEnd(r.toks, start)
		if and < 0 || and == start || and+1 >= len(r.toks) {
			return syntaxError(r.src, tokenOrEOF(r.src, r.toks, max(and, start)))
		}
		end := betweenHighEnd(r.toks, and+1)
		if end == and+1 {
			return syntaxError(r.src, tokenOrEOF(r.src, r.toks, end))
		}
		if err := r.spend(4*(end-i), t); err != nil {
			return err
		}
		a, b := r.toks[start:and], r.toks[and+1:end]
		out = append(out, symmetricBound(a, b, r.toks[and], false)...)
		out = append(out, r.toks[and])
		out = append(out, symmetricBound(a, b, r.toks[and], true)...)
		i = end - 1
	}
	r.toks = out
	return nil
}

// symmetricBound returns (CASE WHEN (a) <= (b) THEN (lo) WHEN (a) > (b)
// THEN (hi) END), lo and hi a and b in order (high: b and a).
func symmetricBound(a, b []token, at token, high bool) []token {
	op := func(v string) token { return synth(tkOp, v, at, false) }
	word := func(v string) token { return synth(tkWord, v, at, true) }
	paren := func(x []token) []token {
		return concat([]token{synth(tkOp, "(", at, true)}, withSpace(x, false), []token{op(")")})
	}
	first, second := a, b
	if high {
		first, second = b, a
	}
	return concat(
		[]token{synth(tkOp, "(", at, true), word("case"), word("when")}, paren(a), []token{synth(tkOp, "<=", at, true)}, paren(b),
		[]token{word("then")}, paren(first),
		[]token{word("when")}, paren(a), []token{synth(tkOp, ">", at, true)}, paren(b),
		[]token{word("then")}, paren(second), []token{word("end"), op(")")})
}

// betweenLowEnd returns the index of the AND that ends the low bound
// starting at toks[i], or -1.
func betweenLowEnd(toks []token, i int) int {
	for ; i < len(toks); i++ {
		t := toks[i]
		switch {
		case t.isOp("(", "["):
			if i = matchParen(toks, i); i < 0 {
				return -1
			}
		case t.isWord("case"):
			if i = matchCase(toks, i); i < 0 {
				return -1
			}
		case t.isWord("and"):
			return i
		case t.isOp(")", "]", ",", ";") || t.isWord("or", "then", "else", "end", "when", "from", "where"):
			return -1
		}
	}
	return -1
}

// betweenHighEnd returns the index just past the high bound starting at
// toks[i]: it ends where a boolean operator, a comparison, a clause or
// the enclosing parenthesis begins, or where a name follows an operand
// (an alias without AS).
func betweenHighEnd(toks []token, i int) int {
	start := i
	for ; i < len(toks); i++ {
		t := toks[i]
		switch {
		case t.isOp(")", "]", ",", ";", "=", "<>", "!=", "<", ">", "<=", ">="):
			return i
		case t.kind == tkWord && (reserved[t.val] || operatorWords[t.val]) && !t.isWord("case", "cast", "array", "null", "true", "false"):
			return i
		case i > start && endsOperand(toks[i-1]) && !toks[i-1].isWord("interval") && (t.kind == tkWord || t.kind == tkIdent):
			return i
		case t.isOp("(", "["):
			j := matchParen(toks, i)
			if j < 0 {
				return len(toks)
			}
			i = j
		case t.isWord("case"):
			j := matchCase(toks, i)
			if j < 0 {
				return len(toks)
			}
			i = j
		}
	}
	return i
}
