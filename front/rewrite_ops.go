package front

// opsPass rewrites PostgreSQL operator spellings the TiDB parser lacks or
// reads differently:
//
//	OPERATOR(pg_catalog.~)  ->  ~            (psql's \d queries use this form)
//	a ~ b, a !~ b           ->  a REGEXP b, a NOT REGEXP b
//	a ~~ b, a !~~ b         ->  a LIKE b, a NOT LIKE b
//	COLLATE name            ->  removed (streamdb has one collation)
//	a ~* b, a !~* b         ->  a REGEXP streamdb_regexp_icase(b), negated
//	a ~~* b, a !~~* b       ->  a ILIKE b, a NOT ILIKE b
//	a ^ b                   ->  power(a, b)  (^ is XOR in MySQL)
//	a @> b, a <@ b, a && b  ->  streamdb_contains(a, b), streamdb_contained(a, b),
//	                            streamdb_overlap(a, b)  (&& is AND in MySQL)
//	a ISNULL, a NOTNULL     ->  a IS NULL, a IS NOT NULL  (postfix operators;
//	                            the TiDB parser would read an alias)
//
// The right operand of ~* and of the array operators is a primary, and
// the left operand of the array operators too: PostgreSQL gives ~* and the
// other operators of its class one precedence, left-associative.
func (r *rewriter) opsPass() error {
	out := make([]token, 0, len(r.toks))
	var closes pending
	for i := 0; i < len(r.toks); i++ {
		out = closes.flush(out, i)
		t := r.toks[i]
		switch {
		case t.isWord("operator") && i+1 < len(r.toks) && r.toks[i+1].isOp("("):
			end := matchParen(r.toks, i+1)
			if end < 0 || end == i+2 {
				return syntaxError(r.src, t)
			}
			op := r.toks[end-1] // OPERATOR(schema.op): the operator is last
			op.space = t.space
			// The operator is read again as the next token.
			r.toks[end] = op
			i = end - 1
			continue
		case t.isWord("collate") && i+1 < len(r.toks) && r.toks[i+1].isName():
			i++
			for i+2 < len(r.toks) && r.toks[i+1].isOp(".") && (r.toks[i+2].kind == tkWord || r.toks[i+2].kind == tkIdent) {
				i += 2
			}
			continue
		case t.isOp("~", "!~", "~~", "!~~") && len(out) > 0 && endsOperand(out[len(out)-1]):
			if t.val[0] == '!' {
				out = append(out, synth(tkWord, "not", t, true))
			}
			word := "regexp"
			if t.val == "~~" || t.val == "!~~" {
				word = "like"
			}
			out = append(out, synth(tkWord, word, t, true))
			continue
		case t.isWord("isnull", "notnull") && len(out) > 0 && endsOperand(out[len(out)-1]):
			// IS binds as PostgreSQL's ISNULL does: looser than the
			// comparison and arithmetic operators, tighter than NOT.
			out = append(out, synth(tkWord, "is", t, true))
			if t.val == "notnull" {
				out = append(out, synth(tkWord, "not", t, true))
			}
			out = append(out, synth(tkWord, "null", t, true))
			continue
		case t.isOp("~~*", "!~~*") && len(out) > 0 && endsOperand(out[len(out)-1]):
			if t.val[0] == '!' {
				out = append(out, synth(tkWord, "not", t, true))
			}
			out = append(out, synth(tkWord, "ilike", t, true))
			continue
		case t.isOp("~*", "!~*") && len(out) > 0 && endsOperand(out[len(out)-1]):
			end := primaryEnd(r.toks, i+1)
			if end < 0 {
				return syntaxError(r.src, tokenOrEOF(r.src, r.toks, i+1))
			}
			if t.val[0] == '!' {
				out = append(out, synth(tkWord, "not", t, true))
			}
			out = append(out, synth(tkWord, "regexp", t, true), synth(tkWord, RegexpICaseFunc, t, true), synth(tkOp, "(", t, false))
			closes.add(end, synth(tkOp, ")", t, false))
			if i+1 < len(r.toks) {
				r.toks[i+1].space = false
			}
			continue
		case t.isOp("@>", "<@", "&&") && len(out) > 0 && endsOperand(out[len(out)-1]):
			s, end := primaryStart(out, len(out)-1), primaryEnd(r.toks, i+1)
			if s < 0 || end < 0 {
				return syntaxError(r.src, tokenOrEOF(r.src, r.toks, i+1))
			}
			if err := r.spend(len(out)-s+end-i, t); err != nil {
				return err
			}
			fn := map[string]string{"@>": ContainsFunc, "<@": ContainedFunc, "&&": OverlapFunc}[t.val]
			left := withSpace(out[s:], false)
			out = append(out[:s:s], synth(tkWord, fn, out[s], out[s].space), synth(tkOp, "(", t, false))
			out = append(out, left...)
			out = append(out, synth(tkOp, ",", t, false))
			closes.add(end, synth(tkOp, ")", t, false))
			if i+1 < len(r.toks) {
				r.toks[i+1].space = true
			}
			continue
		case t.isOp("~*", "!~*", "~~*", "!~~*", "@>", "<@", "&&"):
			return syntaxError(r.src, t)
		}
		out = append(out, t)
	}
	r.toks = closes.flush(out, len(r.toks))
	return r.powerPass()
}

// endsOperand reports whether t can end an operand, so that an operator
// after it is binary.
func endsOperand(t token) bool {
	return t.isOp(")", "]") || t.isOperand() || t.isWord("end")
}

// powerPass rewrites a ^ b into power(a, b). ^ binds tighter than * and
// associates to the left; a unary minus belongs to its operand, as in
// PostgreSQL.
//
// It makes one pass: the left operand is the primary just emitted (which may
// be a power call already, for a ^ b ^ c), and the right operand is scanned
// like the rest, with the call's ')' emitted after it.
func (r *rewriter) powerPass() error {
	if !hasOp(r.toks, "^") {
		return nil
	}
	out := make([]token, 0, len(r.toks)+16)
	var closes pending
	for i := 0; i < len(r.toks); i++ {
		out = closes.flush(out, i)
		caret := r.toks[i]
		if !caret.isOp("^") {
			out = append(out, caret)
			continue
		}
		start := primaryStart(out, len(out)-1)
		if start < 0 {
			return syntaxError(r.src, caret)
		}
		if start > 0 && out[start-1].isOp("-", "+") && (start == 1 || !endsOperand(out[start-2])) {
			start--
		}
		end := primaryEnd(r.toks, i+1)
		if end < 0 {
			return syntaxError(r.src, tokenOrEOF(r.src, r.toks, i+1))
		}
		if err := r.spend(len(out)-start+end-i, caret); err != nil {
			return err
		}
		left := withSpace(out[start:], false)
		first := out[start]
		out = append(out[:start], synth(tkWord, "power", first, first.space), synth(tkOp, "(", caret, false))
		out = append(out, left...)
		out = append(out, synth(tkOp, ",", caret, false))
		closes.add(end, synth(tkOp, ")", caret, false))
		if i+1 < len(r.toks) {
			r.toks[i+1].space = true
		}
	}
	r.toks = closes.flush(out, len(r.toks))
	return nil
}

// primaryEnd returns the index just past the primary that starts at
// toks[i] (with any unary signs before it), or -1.
func primaryEnd(toks []token, i int) int {
	for i < len(toks) && toks[i].isOp("-", "+") {
		i++
	}
	if i >= len(toks) {
		return -1
	}
	t := toks[i]
	var end int
	switch {
	case t.isOp("("):
		if end = matchParen(toks, i); end < 0 {
			return -1
		}
		end++
	case t.isWord("case"):
		if end = matchCase(toks, i); end < 0 {
			return -1
		}
		end++
	case t.kind == tkWord || t.kind == tkIdent:
		if t.kind == tkWord && (operatorWords[t.val] || notFunctionNames[t.val]) {
			return -1
		}
		end = i + 1
		for end+1 < len(toks) && toks[end].isOp(".") && (toks[end+1].kind == tkWord || toks[end+1].kind == tkIdent) {
			end += 2
		}
		if end < len(toks) && toks[end].isOp("(") {
			close := matchParen(toks, end)
			if close < 0 {
				return -1
			}
			end = close + 1
			if end+1 < len(toks) && toks[end].isWord("over") && toks[end+1].isOp("(") {
				if close = matchParen(toks, end+1); close < 0 {
					return -1
				}
				end = close + 1
			}
		}
	case t.isOperand():
		end = i + 1
	default:
		return -1
	}
	for end < len(toks) && toks[end].isOp("[") {
		close := matchParen(toks, end)
		if close < 0 {
			return -1
		}
		end = close + 1
	}
	return end
}
