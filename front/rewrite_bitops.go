package front

// bitOpsPass gives PostgreSQL's bitwise operators on integers their
// PostgreSQL grouping before the TiDB parser reads them:
//
//	a & b, a | b, a << b, a >> b  ->  (a & b), ...    operands parenthesised
//	a # b                         ->  (a ^ b)         (^ is XOR in MySQL; #
//	                                                  starts a comment there)
//	~ a + b                       ->  ~(a + b)
//
// PostgreSQL gives every one of these operators (and its other operators,
// such as ||) one precedence, left-associative, below + and - and above
// the comparisons; a prefix operator takes everything that binds tighter
// as its operand. MySQL ranks | below & below << and >>, and ~ above
// everything, so each operation is parenthesised whole, with each operand
// that is not one primary in parentheses too. It runs after powerPass, so
// that the ^ it writes is not read as a power.
//
// It makes one pass: the left operand is taken from what was emitted (it
// ends at a lower-precedence operator, keyword or parenthesis), and the
// right operand is scanned like the rest, with its ')' emitted after it.
func (r *rewriter) bitOpsPass() error {
	if !hasOp(r.toks, "&") && !hasOp(r.toks, "|") && !hasOp(r.toks, "#") && !hasOp(r.toks, "<<") &&
		!hasOp(r.toks, ">>") && !hasOp(r.toks, "~") {
		return nil
	}
	out := make([]token, 0, len(r.toks)+16)
	var closes pending
	for i := 0; i < len(r.toks); i++ {
		out = closes.flush(out, i)
		t := r.toks[i]
		binaryOp := len(out) > 0 && endsOperand(out[len(out)-1])
		switch {
		case t.isOp("&", "|", "#", "<<", ">>") && binaryOp:
			start := tightOperandStart(out)
			end := tightOperandEnd(r.toks, i+1)
			if start < 0 || start == len(out) {
				return syntaxError(r.src, t)
			}
			if end == i+1 {
				return syntaxError(r.src, tokenOrEOF(r.src, r.toks, i+1))
			}
			if err := r.spend(len(out)-start+end-i, t); err != nil {
				return err
			}
			space := out[start].space
			left := operand(append([]token(nil), out[start:]...), t)
			op := t
			if op.val == "#" {
				op.val = "^"
			}
			out = append(out[:start], synth(tkOp, "(", t, space))
			out = append(out, withSpace(left, false)...)
			out = append(out, op)
			if primaryEnd(r.toks, i+1) == end {
				closes.add(end, synth(tkOp, ")", t, false))
				continue
			}
			out = append(out, synth(tkOp, "(", t, true))
			closes.add(end, synth(tkOp, ")", t, false), synth(tkOp, ")", t, false))
			r.toks[i+1].space = false
			continue
		case t.isOp("~") && !binaryOp:
			end := tightOperandEnd(r.toks, i+1)
			if end == i+1 {
				return syntaxError(r.src, tokenOrEOF(r.src, r.toks, i+1))
			}
			out = append(out, t)
			if primaryEnd(r.toks, i+1) != end {
				out = append(out, synth(tkOp, "(", t, false))
				closes.add(end, synth(tkOp, ")", t, false))
				r.toks[i+1].space = false
			}
			continue
		}
		out = append(out, t)
	}
	r.toks = closes.flush(out, len(r.toks))
	return nil
}

// tightOperators are the binary operators that bind tighter than
// PostgreSQL's other operators (^ has become a power call by now).
func isTightOperator(t token) bool {
	return t.isOp("+", "-", "*", "/", "%")
}

// tightOperandEnd returns the index just past the operand that starts at
// toks[i] of an operator of PostgreSQL's "other operator" precedence:
// primaries joined by + - * / %, each with any prefix signs or ~. It
// returns i when no operand starts there.
func tightOperandEnd(toks []token, i int) int {
	j := i
	for {
		k := j
		for k < len(toks) && toks[k].isOp("~", "-", "+") {
			k++
		}
		e := primaryEnd(toks, k)
		if e < 0 {
			return j
		}
		j = e
		if j+1 < len(toks) && isTightOperator(toks[j]) {
			if primaryEnd(toks, j+1) < 0 && !toks[j+1].isOp("~", "-", "+") {
				return j
			}
			j++
			continue
		}
		return j
	}
}

// tightOperandStart walks back from the end of toks to the start of such an
// operand, or returns -1 when toks do not end in one.
func tightOperandStart(toks []token) int {
	j := len(toks) - 1
	for {
		s := primaryStart(toks, j)
		if s < 0 {
			return -1
		}
		for s > 0 && toks[s-1].isOp("-", "+", "~") && (s == 1 || !endsOperand(toks[s-2])) {
			s-- // a prefix sign or ~
		}
		if s >= 2 && isTightOperator(toks[s-1]) && endsOperand(toks[s-2]) {
			j = s - 2
			continue
		}
		return s
	}
}
