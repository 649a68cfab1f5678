package front

// insertClauses takes the PostgreSQL-only clauses of an INSERT out of its
// tokens (at parenthesis depth 0): OVERRIDING {SYSTEM | USER} VALUE is
// removed and returned ("system" or "user"), and DEFAULT VALUES becomes
// VALUES (), which the TiDB parser reads as one row of no values, each
// column then taking its default.
func insertClauses(toks []token) ([]token, string) {
	overriding := ""
	var out []token
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		if t.isOp("(") {
			j := matchParen(toks, i)
			if j < 0 {
				return append(out, toks[i:]...), overriding
			}
			out = append(out, toks[i:j+1]...)
			i = j
			continue
		}
		switch {
		case overriding == "" && matchWords(toks, i, []string{"overriding", "system", "value"}):
			overriding = "system"
			i += 2
			continue
		case overriding == "" && matchWords(toks, i, []string{"overriding", "user", "value"}):
			overriding = "user"
			i += 2
			continue
		case matchWords(toks, i, []string{"default", "values"}):
			out = append(out, synth(tkWord, "values", t, t.space), synth(tkOp, "(", toks[i+1], true), synth(tkOp, ")", toks[i+1], false))
			i++
			continue
		}
		out = append(out, t)
	}
	return out, overriding
}
