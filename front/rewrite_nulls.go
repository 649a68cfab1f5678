package front

// nullsPass rewrites ORDER BY items with NULLS FIRST / NULLS LAST:
//
//	x [ASC|DESC] NULLS FIRST  ->  (x) IS NULL DESC, x [ASC|DESC]
//	x [ASC|DESC] NULLS LAST   ->  (x) IS NULL ASC, x [ASC|DESC]
//
// streamdb sorts NULL above every value, as PostgreSQL does, so the first key
// puts the NULLs where asked and the second orders the rest.
//
// It makes one pass, taking the item's expression from what was emitted.
func (r *rewriter) nullsPass() error {
	if !hasWord(r.toks, "nulls") {
		return nil
	}
	out := make([]token, 0, len(r.toks)+16)
	for i := 0; i < len(r.toks); i++ {
		nulls := r.toks[i]
		if !(nulls.isWord("nulls") && i+1 < len(r.toks) && r.toks[i+1].isWord("first", "last")) {
			out = append(out, nulls)
			continue
		}
		exprEnd := len(out) // exclusive end of the item's expression
		if exprEnd > 0 && out[exprEnd-1].isWord("asc", "desc") {
			exprEnd--
		}
		start := orderItemStart(out, exprEnd)
		if start >= exprEnd {
			return syntaxError(r.src, nulls)
		}
		if err := r.spend(len(out)-start, nulls); err != nil {
			return err
		}
		if exprEnd-start == 1 && out[start].kind == tkNumber {
			return unsupported(r.src, nulls, "NULLS %s after an ORDER BY position", upper(r.toks[i+1].val)).
				WithHint("Order by the expression itself.")
		}
		dir := "desc" // NULLS FIRST: true (IS NULL) sorts first
		if r.toks[i+1].isWord("last") {
			dir = "asc"
		}
		item := append([]token(nil), out[start:]...) // the expression and its direction
		out = append(out[:start], synth(tkOp, "(", nulls, item[0].space))
		out = append(out, withSpace(item[:exprEnd-start], false)...)
		out = append(out,
			synth(tkOp, ")", nulls, false),
			synth(tkWord, "is", nulls, true),
			synth(tkWord, "null", nulls, true),
			synth(tkWord, dir, nulls, true),
			synth(tkOp, ",", nulls, false),
		)
		out = append(out, withSpace(item, true)...)
		i++
	}
	r.toks = out
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
