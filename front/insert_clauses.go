package front

// insertClauses takes the PostgreSQL-only clauses of an INSERT out of its
// tokens (at parenthesis depth 0): OVERRIDING {SYSTEM | USER} VALUE is
// removed and returned ("system" or "user"), and DEFAULT VALUES becomes
// VALUES (), which the TiDB parser reads as one row of no values, each
// column then taking its default. The target's alias (INSERT INTO t AS
// alias), which the TiDB parser does not read, is removed and returned.
func insertClauses(toks []token) (out []token, overriding, alias string) {
	toks, alias = insertAlias(toks)
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		if t.isOp("(") {
			j := matchParen(toks, i)
			if j < 0 {
				return append(out, toks[i:]...), overriding, alias
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
	return out, overriding, alias
}

// insertAlias takes AS alias off INSERT INTO [schema.]name AS alias.
func insertAlias(toks []token) ([]token, string) {
	if !matchWords(toks, 0, []string{"insert", "into"}) {
		return toks, ""
	}
	i := 2
	if i+2 < len(toks) && toks[i].isName() && toks[i+1].isOp(".") {
		i += 2
	}
	if i+2 >= len(toks) || !toks[i].isName() || !toks[i+1].isWord("as") || !toks[i+2].isName() {
		return toks, ""
	}
	return concat(toks[:i+1], toks[i+3:]), toks[i+2].val
}
