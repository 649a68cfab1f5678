package front

// ctePass drops the MATERIALIZED and NOT MATERIALIZED of a CTE definition
// (name AS [NOT] MATERIALIZED (query)), which the TiDB parser does not
// read. The hint tells PostgreSQL whether to compute a CTE once or inline
// it into the query; the answer is the same either way for queries
// without volatile functions, and streamdb's binder inlines every
// non-recursive CTE (sql/bind_cte.go).
func (r *rewriter) ctePass() error {
	if !hasWord(r.toks, "materialized") {
		return nil
	}
	out := r.toks[:0:0]
	for i := 0; i < len(r.toks); i++ {
		t := r.toks[i]
		if t.isWord("as") && i+2 < len(r.toks) {
			width := 0
			switch {
			case r.toks[i+1].isWord("materialized") && r.toks[i+2].isOp("("):
				width = 1
			case r.toks[i+1].isWord("not") && i+3 < len(r.toks) && r.toks[i+2].isWord("materialized") && r.toks[i+3].isOp("("):
				width = 2
			}
			if width > 0 {
				out = append(out, t)
				r.toks[i+width+1].space = true
				i += width
				continue
			}
		}
		out = append(out, t)
	}
	r.toks = out
	return nil
}
