package front

// Grafana's PostgreSQL data source finds the schemas of the search path
// with a subquery over set-returning functions in FROM:
//
//	SELECT CASE WHEN trim(s[i]) = '"$user"' THEN user ELSE trim(s[i]) END
//	FROM generate_series(array_lower(string_to_array(current_setting('search_path'),','),1),
//	                     array_upper(string_to_array(current_setting('search_path'),','),1)) as i,
//	     string_to_array(current_setting('search_path'),',') s
//
// streamdb has one schema of user objects, public, which is the search
// path ("$user" names no schema), so the subquery is replaced by
// SELECT 'public'.

// searchPathSubquery is the start of that subquery, canonically.
const searchPathSubquery = `select case when trim ( s [ i ] ) = '"$user"' then user else trim ( s [ i ] ) end from generate_series (`

// searchPathPass replaces each search-path subquery (its tokens between
// the parentheses around it).
func (r *rewriter) searchPathPass() error {
	toks := r.toks
	for i := 0; i+1 < len(toks); i++ {
		if !toks[i].isOp("(") || !toks[i+1].isWord("select") {
			continue
		}
		end := matchingParen(toks, i)
		if end < 0 {
			continue
		}
		inner := toks[i+1 : end]
		c := canonical(inner)
		if len(c) < len(searchPathSubquery) || c[:len(searchPathSubquery)] != searchPathSubquery ||
			!endsWith(c, "string_to_array ( current_setting ( 'search_path' ) , ',' ) s") {
			continue
		}
		repl := []token{synth(tkWord, "select", inner[0], false), synth(tkString, "public", inner[0], true)}
		toks = concat(toks[:i+1], repl, toks[end:])
	}
	r.toks = toks
	return nil
}

// matchingParen returns the index of the ")" that closes the "(" at open,
// or -1.
func matchingParen(toks []token, open int) int {
	depth := 0
	for j := open; j < len(toks); j++ {
		switch {
		case toks[j].isOp("("):
			depth++
		case toks[j].isOp(")"):
			if depth--; depth == 0 {
				return j
			}
		}
	}
	return -1
}

func endsWith(s, suffix string) bool {
	return len(s) >= len(suffix) && s[len(s)-len(suffix):] == suffix
}
