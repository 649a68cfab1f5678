package front

// arrayPass rewrites the array forms of PostgreSQL that the catalog
// queries of drivers use:
//
//	ARRAY[a, b]           ->  streamdb_array(a, b)
//	x[i]                  ->  streamdb_subscript(x, i)
//	x = ANY (arr)         ->  streamdb_any(x, '=', 'any', arr)   (also SOME, ALL, <>, <, ...)
//
// The operand of x[i] is the primary before the bracket; the left operand
// of ANY is the primary before the operator. ANY (SELECT ...) is a subquery
// and is left alone, as are array slices (x[1:2]), which are refused.
func (r *rewriter) arrayPass() error {
	if !hasOp(r.toks, "[") && !hasWord(r.toks, "any") && !hasWord(r.toks, "some") && !hasWord(r.toks, "all") {
		return nil
	}
	out := make([]token, 0, len(r.toks)+8)
	var brackets int
	for i := 0; i < len(r.toks); i++ {
		t := r.toks[i]
		switch {
		case t.isOp("["):
			if n := len(out); n > 0 && out[n-1].isWord("array") {
				out[n-1] = synth(tkWord, ArrayFunc, out[n-1], out[n-1].space)
				out = append(out, synth(tkOp, "(", t, false))
				brackets++
				continue
			}
			s := primaryStart(out, len(out)-1)
			if s < 0 || !endsOperand(out[len(out)-1]) {
				return syntaxError(r.src, t)
			}
			if err := r.spend(len(out)-s, t); err != nil {
				return err
			}
			operand := withSpace(out[s:], false)
			out = append(out[:s:s], synth(tkWord, SubscriptFunc, out[s], out[s].space), synth(tkOp, "(", t, false))
			out = append(out, operand...)
			out = append(out, synth(tkOp, ",", t, false))
			brackets++
			continue
		case t.isOp("]"):
			if brackets == 0 {
				return syntaxError(r.src, t)
			}
			brackets--
			out = append(out, synth(tkOp, ")", t, false))
			continue
		case t.isOp(":") && brackets > 0:
			return unsupported(r.src, t, "an array slice (x[a:b])")
		case t.isWord("any", "some", "all") && i+1 < len(r.toks) && r.toks[i+1].isOp("(") &&
			!(i+2 < len(r.toks) && r.toks[i+2].isWord("select", "with", "values")) &&
			len(out) >= 2 && out[len(out)-1].isOp("=", "<>", "!=", "<", "<=", ">", ">="):
			op := out[len(out)-1]
			s := primaryStart(out, len(out)-2)
			if s < 0 {
				return syntaxError(r.src, t)
			}
			s = operandStart(out, s)
			if err := r.spend(len(out)-s, t); err != nil {
				return err
			}
			kind := "any"
			if t.isWord("all") {
				kind = "all"
			}
			operand := withSpace(out[s:len(out)-1], false)
			out = append(out[:s:s], synth(tkWord, AnyFunc, out[s], out[s].space), synth(tkOp, "(", t, false))
			out = append(out, operand...)
			out = append(out, synth(tkOp, ",", t, false), synth(tkString, op.val, op, true),
				synth(tkOp, ",", t, false), synth(tkString, kind, t, true), synth(tkOp, ",", t, false))
			i++ // the ( of ANY (...): its contents and ) close the call
			continue
		}
		out = append(out, t)
	}
	r.toks = out
	return nil
}

// operandStart extends the primary at out[s:] back over the arithmetic
// and unary operators that bind tighter than a comparison, so that the
// left operand of 2 - 1 = ANY (...) is 2 - 1 and that of -1 = ANY (...)
// is -1.
func operandStart(out []token, s int) int {
	for s > 0 && out[s-1].isOp("+", "-", "*", "/", "%", "||", "^") {
		if s == 1 || !endsOperand(out[s-2]) {
			if out[s-1].isOp("-", "+") {
				s-- // a unary sign
			}
			return s
		}
		p := primaryStart(out, s-2)
		if p < 0 {
			return s
		}
		s = p
	}
	return s
}
