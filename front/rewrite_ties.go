package front

import "streamdb/sqlerr"

// withTiesPass turns FETCH {FIRST|NEXT} [n] {ROW|ROWS} WITH TIES of the
// statement's outermost query block into ... ONLY (which limitPass then
// writes as LIMIT) and records it in withTies: the binder marks that
// query's Limit, which the batch executor and a view's top-N extend over
// the rows that tie with the last one in the ORDER BY. In a subquery
// (inside parentheses) it is refused, as are the statements that do not
// take it (parseQuery's caller checks withTies).
func (r *rewriter) withTiesPass() error {
	depth := 0
	for i := 0; i < len(r.toks); i++ {
		t := r.toks[i]
		switch {
		case t.isOp("("):
			depth++
		case t.isOp(")"):
			depth--
		}
		ties := fetchWithTies(r.toks, i)
		if ties < 0 {
			continue
		}
		if depth > 0 || r.withTies {
			return unsupported(r.src, r.toks[ties], "FETCH ... WITH TIES in a subquery").
				WithHint("Use FETCH ... ONLY or LIMIT, or rank() in a subquery and keep the rows ranked up to n.")
		}
		if nullLiteral(r.toks[i+2 : ties-1]) {
			// As PostgreSQL: only the literal; a NULL computed when the
			// query runs is no limit.
			return errorAt(r.src, r.toks[i+2], sqlerr.InvalidRowCountInLimitClause, "row count cannot be null in FETCH FIRST ... WITH TIES clause").
				WithHint("Give FETCH FIRST a number of rows, or use FETCH ... ONLY, where NULL is no limit.")
		}
		r.withTies = true
		only := synth(tkWord, "only", r.toks[ties], true)
		r.toks = concat(r.toks[:ties], []token{only}, r.toks[ties+2:])
	}
	return nil
}

// nullLiteral reports whether toks are NULL, in any number of
// parentheses.
func nullLiteral(toks []token) bool {
	for len(toks) >= 2 && toks[0].isOp("(") && toks[len(toks)-1].isOp(")") {
		toks = toks[1 : len(toks)-1]
	}
	return len(toks) == 1 && toks[0].isWord("null")
}
