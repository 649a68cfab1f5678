package front

// arraySubqueryPass rewrites PostgreSQL's array constructor over a
// subquery, which pg_dump's catalog queries use, into an aggregate over
// the same rows:
//
//	ARRAY(SELECT x FROM ... [ORDER BY k])
//	  ->  COALESCE((SELECT array_agg(x [ORDER BY k]) FROM ...), '{}')
//
// so that no rows give an empty array, as in PostgreSQL. A subquery with
// more than one output column, or with DISTINCT, GROUP BY, HAVING,
// LIMIT, OFFSET, FETCH, WINDOW or a set operation at its top level, is
// left alone and refused where the TiDB parser stops.
func (r *rewriter) arraySubqueryPass() error {
	if !hasWord(r.toks, "array") {
		return nil
	}
	out, err := r.arraySubqueries(r.toks)
	if err != nil {
		return err
	}
	r.toks = out
	return nil
}

func (r *rewriter) arraySubqueries(toks []token) ([]token, error) {
	out := make([]token, 0, len(toks))
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		if !(t.isWord("array") && i+2 < len(toks) && toks[i+1].isOp("(") && toks[i+2].isWord("select")) {
			out = append(out, t)
			continue
		}
		end := matchParen(toks, i+1)
		if end < 0 {
			return nil, syntaxError(r.src, toks[i+1])
		}
		body, err := r.arraySubqueries(toks[i+3 : end])
		if err != nil {
			return nil, err
		}
		agg, ok := arrayAggOf(body, t)
		if !ok {
			out = append(out, toks[i:end+1]...)
			i = end
			continue
		}
		if err := r.spend(len(agg), t); err != nil {
			return nil, err
		}
		out = append(out, agg...)
		i = end
	}
	return out, nil
}

// arrayAggOf builds COALESCE((SELECT array_agg(field [ORDER BY keys])
// FROM ...), '{}') from the tokens after ARRAY(SELECT and before its
// closing parenthesis; ok is false for a subquery it does not take.
func arrayAggOf(body []token, at token) (out []token, ok bool) {
	from, order := -1, -1
	depth := 0
	caseDepth := 0
	for j, t := range body {
		switch {
		case t.isOp("(", "["):
			depth++
		case t.isOp(")", "]"):
			depth--
		case depth > 0:
		case t.isWord("case"):
			caseDepth++
		case t.isWord("end") && caseDepth > 0:
			caseDepth--
		case t.isOp(",") && from < 0 && caseDepth == 0:
			return nil, false // more than one output column
		case t.isWord("from") && from < 0 && caseDepth == 0:
			from = j
		case t.isWord("order") && j+1 < len(body) && body[j+1].isWord("by") && caseDepth == 0:
			order = j
		case t.isWord("distinct", "all", "group", "having", "limit", "offset", "fetch", "window", "union",
			"intersect", "except", "into", "for") && caseDepth == 0:
			return nil, false
		}
	}
	if len(body) == 0 || body[0].isWord("distinct", "all") {
		return nil, false
	}
	fieldEnd := len(body)
	switch {
	case from >= 0:
		fieldEnd = from
	case order >= 0:
		fieldEnd = order
	}
	field := body[:fieldEnd]
	if n := len(field); n >= 2 && field[n-2].isWord("as") {
		field = field[:n-2]
	}
	if len(field) == 0 {
		return nil, false
	}
	var rest, keys []token
	switch {
	case from >= 0 && order >= 0:
		rest, keys = body[from:order], body[order:]
	case from >= 0:
		rest = body[from:]
	case order >= 0:
		keys = body[order:]
	}
	out = append(out, synth(tkWord, "coalesce", at, at.space), synth(tkOp, "(", at, false),
		synth(tkOp, "(", at, false), synth(tkWord, "select", at, false),
		synth(tkWord, "array_agg", at, true), synth(tkOp, "(", at, false))
	out = append(out, withSpace(field, false)...)
	if len(keys) > 0 {
		out = append(out, withSpace(keys, true)...)
	}
	out = append(out, synth(tkOp, ")", at, false))
	out = append(out, withSpace(rest, true)...)
	out = append(out, synth(tkOp, ")", at, false), synth(tkOp, ",", at, false),
		synth(tkString, "{}", at, true), synth(tkOp, ")", at, false))
	return out, true
}
