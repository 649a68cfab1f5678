package front

import "streamdb/sqlerr"

// rewriter carries a statement body through the token rewrites that turn
// PostgreSQL spellings into text the TiDB parser reads.
type rewriter struct {
	src     string
	toks    []token
	windows map[string]*WindowTVF
	asOf    *AsOf
	// withTies: the outermost query's FETCH ... WITH TIES became ONLY.
	withTies bool
	// budget is what is left of the statement's rewrite work (spend).
	budget int
}

// rewrite applies every rewrite to toks, in an order where each one sees
// the forms it expects: AS OF and window functions read raw INTERVAL
// literals, typed literals become calls before :: looks for its operand, and
// the operator rewrites see whole casts and calls as single primaries.
func rewrite(src string, toks []token) (*rewriter, error) {
	r := &rewriter{src: src, toks: toks, budget: rewriteBudgetBase + rewriteBudgetPerToken*len(toks)}
	if err := checkNesting(src, toks); err != nil {
		return nil, err
	}
	passes := []func() error{
		r.checkTokens,
		r.likeEscapePass,
		r.betweenPass,
		r.emptySelectPass,
		r.distinctOnPass,
		r.namedArgsPass,
		r.searchPathPass,
		r.ctePass,
		r.valuesPass,
		r.arraySubqueryPass,
		r.seriesPass,
		r.orderedAggPass,
		r.asOfPass,
		r.windowPass,
		r.literalPass,
		r.longNumberPass,
		r.castPass,
		r.arrayPass,
		r.trimPass,
		r.keywordArgsPass,
		r.windowArgsPass,
		r.atTimeZonePass,
		r.funcPass,
		r.aggDistinctPass,
		r.jsonOpsPass,
		r.opsPass,
		r.bitOpsPass,
		r.limitPass,
		r.distinctPass,
		r.nullsPass,
		r.usingAliasPass,
		r.fullJoinPass,
		r.quotePass,
		r.callSpacePass,
	}
	for _, pass := range passes {
		if err := pass(); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// checkTokens refuses tokens that mean something else to the TiDB parser
// than to PostgreSQL: ? (a parameter marker there), # (a comment there)
// but as a binary operator, and backquotes; and parameters numbered 0.
func (r *rewriter) checkTokens() error {
	for i, t := range r.toks {
		switch {
		case t.isOp("#") && i > 0 && endsOperand(r.toks[i-1]):
			// PostgreSQL's xor, which bitOpsPass rewrites.
		case t.isOp("?") && i > 0 && endsOperand(r.toks[i-1]):
			// jsonb's key test, which jsonOpsPass rewrites.
		case t.isOp("?", "#", "`"):
			return syntaxError(r.src, t)
		case t.kind == tkParam && t.n == 0:
			return errorAt(r.src, t, sqlerr.UndefinedParameter, "there is no parameter $0")
		case t.kind == tkParam && t.n > 65535:
			return errorAt(r.src, t, sqlerr.UndefinedParameter, "there is no parameter %s", t.val)
		}
	}
	return nil
}

// numParams returns the highest $n in toks.
func numParams(toks []token) int {
	n := 0
	for _, t := range toks {
		if t.kind == tkParam && t.n > n {
			n = t.n
		}
	}
	return n
}
