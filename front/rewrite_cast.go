package front

// castPass rewrites expr::type and CAST(expr AS type) into
// streamdb_cast(expr, 'type'). It runs left to right over its own output, so
// the operand of :: is the primary just emitted, which may itself be a cast
// (x::text::int).
func (r *rewriter) castPass() error {
	out := make([]token, 0, len(r.toks))
	type frame struct{ cast, asSeen bool }
	var stack []frame
	for i := 0; i < len(r.toks); i++ {
		t := r.toks[i]
		switch {
		case t.isWord("cast") && i+1 < len(r.toks) && r.toks[i+1].isOp("("):
			out = append(out, synth(tkWord, CastFunc, t, t.space), r.toks[i+1])
			stack = append(stack, frame{cast: true})
			i++
			continue
		case t.isOp("("):
			stack = append(stack, frame{})
		case t.isOp(")"):
			if n := len(stack); n > 0 {
				if stack[n-1].cast && !stack[n-1].asSeen {
					return syntaxError(r.src, t)
				}
				stack = stack[:n-1]
			}
		case t.isWord("as") && len(stack) > 0 && stack[len(stack)-1].cast && !stack[len(stack)-1].asSeen:
			tn, next, err := readTypeName(r.src, r.toks, i+1)
			if err != nil {
				return err
			}
			if next >= len(r.toks) || !r.toks[next].isOp(")") {
				return syntaxError(r.src, tokenOrEOF(r.src, r.toks, next))
			}
			stack[len(stack)-1].asSeen = true
			out = append(out, synth(tkOp, ",", t, false), synth(tkString, tn.Text, t, true))
			i = next - 1
			continue
		case t.isOp("::"):
			s := primaryStart(out, len(out)-1)
			if s < 0 {
				return syntaxError(r.src, t)
			}
			if err := r.spend(len(out)-s, t); err != nil {
				return err
			}
			tn, next, err := readTypeName(r.src, r.toks, i+1)
			if err != nil {
				return err
			}
			// Only the operand is copied: the cost of a cast is the length
			// of its operand, not of the whole query.
			operand := withSpace(out[s:], false)
			out = append(out[:s], synth(tkWord, CastFunc, out[s], out[s].space), synth(tkOp, "(", t, false))
			out = append(out, operand...)
			out = append(out, synth(tkOp, ",", t, false), synth(tkString, tn.Text, t, true), synth(tkOp, ")", t, false))
			i = next - 1
			continue
		}
		out = append(out, t)
	}
	r.toks = out
	return nil
}

// tokenOrEOF returns toks[i], or the end-of-input token past the end.
func tokenOrEOF(src string, toks []token, i int) token {
	if i < len(toks) {
		return toks[i]
	}
	return eofToken(src)
}
