package front

// emptySelectPass gives an empty select list, which PostgreSQL allows
// (SELECT FROM t, SELECT UNION SELECT: rows of no columns), the one field
// streamdb_no_columns() that the binder drops, since the TiDB parser wants
// at least one.
func (r *rewriter) emptySelectPass() error {
	if !hasWord(r.toks, "select") {
		return nil
	}
	out := make([]token, 0, len(r.toks)+3)
	for i := 0; i < len(r.toks); i++ {
		t := r.toks[i]
		out = append(out, t)
		if !t.isWord("select") {
			continue
		}
		j := i + 1
		// SELECT ALL may have an empty list; SELECT DISTINCT may not.
		if j < len(r.toks) && r.toks[j].isWord("all") {
			out = append(out, r.toks[j])
			j++
		}
		next := tokenOrEOF(r.src, r.toks, j)
		if next.kind == tkEOF || next.isOp(")", ";") || next.kind == tkWord && selectListEnds[next.val] {
			out = append(out, synth(tkWord, NoColumnsFunc, t, true), synth(tkOp, "(", t, false), synth(tkOp, ")", t, false))
		}
		i = j - 1
	}
	r.toks = out
	return nil
}

// selectListEnds are the words that may follow a select list.
var selectListEnds = setOf("from", "where", "group", "having", "window", "order", "limit", "offset",
	"fetch", "union", "intersect", "except", "into", "for")
