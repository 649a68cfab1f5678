package front

import "streamdb/sqlerr"

// seriesPass turns generate_series in a FROM clause, which the TiDB
// parser does not read there, into a one-column derived table whose
// select list is a call the binder knows (sql/bind_series.go), naming
// the column as PostgreSQL does (the column alias, else the table alias,
// else generate_series):
//
//	generate_series(1, 10, 2) AS t(x)  ->  (SELECT streamdb_generate_series(1, 10, 2) AS x) AS t
//	generate_series(1, 3) g            ->  (SELECT streamdb_generate_series(1, 3) AS g) AS g
//
// unnest(array) in FROM is rewritten the same way, to streamdb_unnest.
func (r *rewriter) seriesPass() error {
	if !hasWord(r.toks, "generate_series") && !hasWord(r.toks, "unnest") {
		return nil
	}
	out := make([]token, 0, len(r.toks)+8)
	for i := 0; i < len(r.toks); i++ {
		t := r.toks[i]
		fn, ok := fromFunctions[t.val]
		if !ok || t.kind != tkWord || i+1 >= len(r.toks) || !r.toks[i+1].isOp("(") || !inFromClause(r.toks, i) {
			out = append(out, t)
			continue
		}
		end := matchParen(r.toks, i+1)
		if end < 0 {
			return syntaxError(r.src, t)
		}
		call := append([]token{synth(tkWord, fn, t, true)}, r.toks[i+1:end+1]...)
		col, alias := t.val, ""
		next := end + 1
		a := next
		if a < len(r.toks) && r.toks[a].isWord("as") {
			a++
		}
		if a < len(r.toks) && r.toks[a].isName() && !r.toks[a].isWord(fromFollowers...) {
			alias, col = r.toks[a].val, r.toks[a].val
			next = a + 1
			if c := a + 1; c < len(r.toks) && r.toks[c].isOp("(") {
				ce := matchParen(r.toks, c)
				names := splitTopLevel(r.toks[c+1 : max(ce, c+1)])
				if ce < 0 || len(names) != 1 || len(names[0]) != 1 || !names[0][0].isName() {
					return errorAt(r.src, r.toks[c], sqlerr.SyntaxError, "%s returns one column: write AS alias(column)", t.val)
				}
				col = names[0][0].val
				next = ce + 1
			}
		}
		if alias == "" {
			alias = t.val
		}
		out = append(out, synth(tkOp, "(", t, t.space), synth(tkWord, "select", t, false))
		out = append(out, call...)
		out = append(out, synth(tkWord, "as", t, true), nameToken(col, t, true), synth(tkOp, ")", t, false),
			synth(tkWord, "as", t, true), nameToken(alias, t, true))
		i = next - 1
	}
	r.toks = out
	return nil
}

// fromFollowers are the words that may follow a FROM item, which are no
// alias.
var fromFollowers = []string{"where", "join", "inner", "left", "right", "full", "cross", "natural", "on", "using",
	"group", "having", "order", "limit", "offset", "union", "except", "intersect", "window", "fetch", "for", "with"}

// inFromClause reports whether toks[i] is in a FROM clause: the nearest
// clause keyword before it at its parenthesis depth is FROM (or JOIN).
func inFromClause(toks []token, i int) bool {
	depth := 0
	for j := i - 1; j >= 0; j-- {
		t := toks[j]
		switch {
		case t.isOp(")"):
			depth++
		case t.isOp("("):
			if depth == 0 {
				return false
			}
			depth--
		case depth > 0:
		case t.isWord("from", "join", "lateral"):
			return true
		case t.isWord("select", "where", "group", "having", "order", "limit", "on", "set", "values", "returning", "union", "by"):
			return false
		}
	}
	return false
}

// fromFunctions are the set-returning functions seriesPass rewrites in
// FROM, and the names the binder knows them by.
var fromFunctions = map[string]string{"generate_series": SeriesFunc, "unnest": UnnestFunc}
