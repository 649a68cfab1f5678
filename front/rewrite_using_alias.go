package front

// usingAliasStop are the words that, met going back from a USING, show it
// is not a join's (DELETE ... USING, a clause of another statement).
var usingAliasStop = setOf("from", "delete", "select", "where", "using", "on",
	"set", "update", "into", "with", "union", "intersect", "except", "group",
	"having", "order", "limit", "offset", "returning", "values")

// usingAliasPass rewrites a JOIN's USING (x, y) AS j, PostgreSQL's alias
// of the join's merged columns, into USING (x, y, streamdb_using_as.j):
// the TiDB parser has no alias there, and a qualified name in the list
// carries it to the binder (UsingAliasTable). It runs before fullJoinPass,
// which moves a FULL JOIN's list, marker included, into streamdb_using().
func (r *rewriter) usingAliasPass() error {
	if !hasWord(r.toks, "using") || !hasWord(r.toks, "join") {
		return nil
	}
	for i := 0; i+1 < len(r.toks); i++ {
		if !r.toks[i].isWord("using") || !r.toks[i+1].isOp("(") || !joinUsing(r.toks, i) {
			continue
		}
		end := matchParen(r.toks, i+1)
		if end < 0 || end+2 >= len(r.toks) {
			continue
		}
		if !r.toks[end+1].isWord("as") || !r.toks[end+2].isName() {
			continue
		}
		as, alias := r.toks[end+1], r.toks[end+2]
		marker := []token{
			synth(tkOp, ",", as, false),
			synth(tkWord, UsingAliasTable, as, true),
			synth(tkOp, ".", as, false),
			alias,
		}
		marker[3].space = false
		out := make([]token, 0, len(r.toks)+2)
		out = append(out, r.toks[:end]...)
		out = append(out, marker...)
		out = append(out, r.toks[end])
		out = append(out, r.toks[end+3:]...)
		r.toks = out
		i = end + len(marker)
	}
	return nil
}

// joinUsing reports whether the USING at toks[i] belongs to a JOIN: going
// back over the join's right side (names, dots, parenthesized parts), a
// JOIN comes before any clause word.
func joinUsing(toks []token, i int) bool {
	for j := i - 1; j >= 0; j-- {
		t := toks[j]
		switch {
		case t.isOp(")"):
			if j = matchParenBack(toks, j); j < 0 {
				return false
			}
		case t.isWord("join"):
			return true
		case t.kind == tkWord && usingAliasStop[t.val]:
			return false
		case t.kind == tkOp && !t.isOp("."):
			return false
		}
	}
	return false
}
