package front

// keywordArgsPass rewrites the calls whose arguments PostgreSQL separates
// by key words, in the forms the TiDB parser does not read, into the
// plain calls PostgreSQL itself reads them as:
//
//	OVERLAY(s PLACING r FROM start [FOR count])  ->  overlay(s, r, start[, count])
//	SUBSTRING(s FOR count)                       ->  substring(s, 1, count)
//	SUBSTRING(s FOR count FROM start)            ->  substring(s, start, count)
//
// SUBSTRING(s FROM start [FOR count]) the TiDB parser reads itself. The
// arguments keep their tokens, so later passes rewrite them as usual.
func (r *rewriter) keywordArgsPass() error {
	if !hasWord(r.toks, "overlay") && !hasWord(r.toks, "substring") {
		return nil
	}
	out := make([]token, 0, len(r.toks)+4)
	for i := 0; i < len(r.toks); i++ {
		t := r.toks[i]
		if !t.isWord("overlay", "substring") || i+1 >= len(r.toks) || !r.toks[i+1].isOp("(") || (i > 0 && r.toks[i-1].isOp(".")) {
			out = append(out, t)
			continue
		}
		end := matchParen(r.toks, i+1)
		if end < 0 {
			return syntaxError(r.src, eofToken(r.src))
		}
		words, err := topLevelWords(r.src, r.toks[i+2:end], "placing", "from", "for")
		if err != nil {
			return err
		}
		args, ok := keywordArgs(t.val, r.toks[i+2:end], words)
		if !ok {
			out = append(out, t)
			continue
		}
		if err := r.spend(end-i, t); err != nil {
			return err
		}
		out = append(out, t, r.toks[i+1])
		for k, a := range args {
			if len(a) == 0 {
				return syntaxError(r.src, r.toks[end])
			}
			if k > 0 {
				out = append(out, synth(tkOp, ",", a[0], false))
			}
			out = append(out, withSpace(a, k > 0)...)
		}
		out = append(out, r.toks[end])
		i = end
	}
	r.toks = out
	return nil
}

// keyWord is a key word found among a call's arguments, at index at.
type keyWord struct {
	word string
	at   int
}

// topLevelWords are the words of list among toks outside parentheses,
// brackets and CASE ... END, in order.
func topLevelWords(src string, toks []token, list ...string) ([]keyWord, error) {
	var found []keyWord
	for j := 0; j < len(toks); j++ {
		switch {
		case toks[j].isOp("(", "["):
			j = matchParen(toks, j)
		case toks[j].isWord("case"):
			j = matchCase(toks, j)
		case toks[j].isWord(list...):
			found = append(found, keyWord{toks[j].val, j})
		}
		if j < 0 {
			return nil, syntaxError(src, eofToken(src))
		}
	}
	return found, nil
}

// keywordArgs are the plain arguments of a call of fn written with key
// words, or ok false when it is not one of the forms keywordArgsPass
// rewrites.
func keywordArgs(fn string, toks []token, words []keyWord) (args [][]token, ok bool) {
	is := func(ws ...string) bool {
		if len(words) != len(ws) {
			return false
		}
		for k, w := range ws {
			if words[k].word != w {
				return false
			}
		}
		return true
	}
	part := func(k int) []token { // the tokens after words[k]
		end := len(toks)
		if k+1 < len(words) {
			end = words[k+1].at
		}
		return toks[words[k].at+1 : end]
	}
	switch {
	case len(words) == 0:
		return nil, false
	case fn == "overlay" && is("placing", "from"):
		return [][]token{toks[:words[0].at], part(0), part(1)}, true
	case fn == "overlay" && is("placing", "from", "for"):
		return [][]token{toks[:words[0].at], part(0), part(1), part(2)}, true
	case fn == "substring" && is("for"):
		one := synth(tkNumber, "1", toks[words[0].at], true)
		return [][]token{toks[:words[0].at], {one}, part(0)}, true
	case fn == "substring" && is("for", "from"):
		return [][]token{toks[:words[0].at], part(1), part(0)}, true
	}
	return nil, false
}
