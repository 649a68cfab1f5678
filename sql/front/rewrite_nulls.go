package front

// nullsPass rewrites ORDER BY items with NULLS FIRST / NULLS LAST:
//
//	x [ASC|DESC] NULLS FIRST  ->  (x) IS NULL DESC, x [ASC|DESC]
//	x [ASC|DESC] NULLS LAST   ->  (x) IS NULL ASC, x [ASC|DESC]
//
// streamdb sorts NULL above every value, as PostgreSQL does, so the first key
// puts the NULLs where asked and the second orders the rest.
func (r *rewriter) nullsPass() error {
	for i := 0; i < len(r.toks); i++ {
		nulls := r.toks[i]
		if !(nulls.isWord("nulls") && i+1 < len(r.toks) && r.toks[i+1].isWord("first", "last")) {
			continue
		}
		exprEnd := i // exclusive end of the item's expression
		if i > 0 && r.toks[i-1].isWord("asc", "desc") {
			exprEnd = i - 1
		}
		start := orderItemStart(r.toks, exprEnd)
		if start >= exprEnd {
			return syntaxError(r.src, nulls)
		}
		expr := r.toks[start:exprEnd]
		if len(expr) == 1 && expr[0].kind == tkNumber {
			return unsupported(r.src, nulls, "NULLS %s after an ORDER BY position", upper(r.toks[i+1].val)).
				WithHint("Order by the expression itself.")
		}
		dir := "desc" // NULLS FIRST: true (IS NULL) sorts first
		if r.toks[i+1].isWord("last") {
			dir = "asc"
		}
		repl := concat(
			[]token{synth(tkOp, "(", nulls, r.toks[start].space)},
			withSpace(expr, false),
			[]token{
				synth(tkOp, ")", nulls, false),
				synth(tkWord, "is", nulls, true),
				synth(tkWord, "null", nulls, true),
				synth(tkWord, dir, nulls, true),
				synth(tkOp, ",", nulls, false),
			},
			withSpace(r.toks[start:i], true),
		)
		r.toks = concat(r.toks[:start], repl, r.toks[i+2:])
		i = start + len(repl) - 1
	}
	return nil
}

// orderItemStart walks back from toks[end-1] to the start of an ORDER BY
// item: just after BY or a comma at the same depth.
func orderItemStart(toks []token, end int) int {
	for j := end - 1; j >= 0; j-- {
		t := toks[j]
		switch {
		case t.isOp(")", "]"):
			if j = matchParenBack(toks, j); j < 0 {
				return 0
			}
		case t.isWord("end"):
			if j = matchCaseBack(toks, j); j < 0 {
				return 0
			}
		case t.isOp(",", "("), t.isWord("by"):
			return j + 1
		}
	}
	return 0
}
