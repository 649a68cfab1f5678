package front

import "streamdb/sqlerr"

// seriesPass turns a set-returning function call in a FROM clause, and
// ROWS FROM (...), which the TiDB parser does not read there, into a
// derived table whose select list is one call of RowsFromFunc, which the
// binder knows (sql/bind_srf_from.go):
//
//	f(args) [WITH ORDINALITY] [[AS] t[(c1, ...)]]
//	ROWS FROM (f(args), g(args)) [WITH ORDINALITY] [[AS] t[(c1, ...)]]
//	  ->  LATERAL (SELECT streamdb_rows_from(flags, 't', 'c1', ..., f(args), g(args)) AS f) AS t
//
// flags is 1 with ORDINALITY, plus 2 for ROWS FROM; the table alias (” if
// none) and the column aliases are string literals before the calls. The
// binder names the columns from them as PostgreSQL does. The derived table
// is LATERAL when it follows a comma or JOIN, as a function in FROM may
// name the columns of the items before it; the binder joins it as an
// ordinary derived table when it does not. Without an alias the table is
// named after the (first) function.
func (r *rewriter) seriesPass() error {
	found := false
	for _, w := range fromFunctions {
		found = found || hasWord(r.toks, w)
	}
	if !found && !hasWord(r.toks, "rows") {
		return nil
	}
	out := make([]token, 0, len(r.toks)+8)
	for i := 0; i < len(r.toks); i++ {
		t := r.toks[i]
		if t.kind != tkWord || !inFromClause(r.toks, i) {
			out = append(out, t)
			continue
		}
		var calls [][]token
		var end int
		switch {
		case t.isWord(fromFunctions...) && i+1 < len(r.toks) && r.toks[i+1].isOp("("):
			if end = matchParen(r.toks, i+1); end < 0 {
				return syntaxError(r.src, t)
			}
			calls = [][]token{r.toks[i : end+1]}
		case t.isWord("rows") && i+2 < len(r.toks) && r.toks[i+1].isWord("from") && r.toks[i+2].isOp("("):
			if end = matchParen(r.toks, i+2); end < 0 {
				return syntaxError(r.src, t)
			}
			for _, c := range splitTopLevel(r.toks[i+3 : end]) {
				if len(c) < 3 || !c[0].isWord(fromFunctions...) || !c[1].isOp("(") || matchParen(c, 1) != len(c)-1 {
					at := r.toks[end]
					if len(c) > 0 {
						at = c[0]
					}
					return errorAt(r.src, at, sqlerr.FeatureNotSupported, "ROWS FROM takes calls of generate_series, unnest, regexp_matches or regexp_split_to_table")
				}
				calls = append(calls, c)
			}
		default:
			out = append(out, t)
			continue
		}
		if n := len(out); n >= 2 && out[n-1].isOp(".") && out[n-2].isWord("pg_catalog") {
			out = out[:n-2] // pg_catalog.unnest(...)
		}
		flags := 0
		if t.isWord("rows") {
			flags |= 2
		}
		next := end + 1
		if next+1 < len(r.toks) && r.toks[next].isWord("with") && r.toks[next+1].isWord("ordinality") {
			flags |= 1
			next += 2
		}
		alias := ""
		var cols []token
		a := next
		if a < len(r.toks) && r.toks[a].isWord("as") {
			a++
		}
		if a < len(r.toks) && r.toks[a].isName() && !r.toks[a].isWord(fromFollowers...) {
			alias = r.toks[a].val
			next = a + 1
			if c := a + 1; c < len(r.toks) && r.toks[c].isOp("(") {
				ce := matchParen(r.toks, c)
				if ce < 0 {
					return syntaxError(r.src, r.toks[c])
				}
				for _, n := range splitTopLevel(r.toks[c+1 : ce]) {
					if len(n) != 1 || !n[0].isName() {
						return errorAt(r.src, r.toks[c], sqlerr.SyntaxError, "write the column aliases of %s as AS alias(name, ...)", t.val)
					}
					cols = append(cols, n[0])
				}
				next = ce + 1
			}
		}
		tableName := alias
		if tableName == "" {
			tableName = calls[0][0].val
		}
		if len(out) > 0 && out[len(out)-1].isOp(",") || len(out) > 0 && out[len(out)-1].isWord("join") {
			out = append(out, synth(tkWord, "lateral", t, true))
		}
		out = append(out, synth(tkOp, "(", t, t.space), synth(tkWord, "select", t, false),
			synth(tkWord, RowsFromFunc, t, true), synth(tkOp, "(", t, false),
			synth(tkNumber, string(rune('0'+flags)), t, false),
			synth(tkOp, ",", t, false), synth(tkString, alias, t, true))
		for _, c := range cols {
			out = append(out, synth(tkOp, ",", t, false), synth(tkString, c.val, c, true))
		}
		for _, c := range calls {
			out = append(out, synth(tkOp, ",", t, false))
			out = append(out, withSpace(c, true)...)
		}
		out = append(out, synth(tkOp, ")", t, false), synth(tkOp, ")", t, false),
			synth(tkWord, "as", t, true), nameToken(tableName, t, true))
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
// FROM.
var fromFunctions = []string{"generate_series", "unnest", "regexp_matches", "regexp_split_to_table", "generate_subscripts",
	"jsonb_array_elements", "jsonb_array_elements_text", "jsonb_object_keys", "jsonb_path_query",
	"json_array_elements", "json_array_elements_text", "json_object_keys",
	"jsonb_each", "jsonb_each_text", "json_each", "json_each_text", "pg_options_to_table"}
