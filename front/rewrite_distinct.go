package front

// leftBoundary are the words before the left operand of IS [NOT] DISTINCT
// FROM: everything after them, up to IS, binds tighter than IS.
var leftBoundary = setOf("and", "or", "not", "when", "then", "else", "case",
	"select", "where", "having", "on", "by", "set", "returning", "values",
	"distinct", "all", "from", "limit", "offset", "using")

// rightStop are the words that end the right operand.
var rightStop = setOf("and", "or", "then", "else", "when", "end", "from",
	"where", "group", "having", "order", "limit", "offset", "union",
	"intersect", "except", "as", "asc", "desc", "nulls", "on", "join", "left",
	"right", "inner", "full", "cross", "natural", "is", "window", "for",
	"returning", "into", "using", "isnull", "notnull")

// distinctPass rewrites a IS NOT DISTINCT FROM b into a <=> b and
// a IS DISTINCT FROM b into NOT a <=> b. The TiDB parser gives NOT a lower
// precedence than <=>, so the latter reads as NOT (a <=> b). Operands that
// are not a single primary are parenthesised, since IS binds looser than
// the comparison operators in PostgreSQL and <=> does not in MySQL.
//
// It makes one pass: the left operand is taken from what was emitted, and
// the right operand is scanned like the rest (it may hold another IS
// DISTINCT FROM), with a ')' after it when it needs one.
func (r *rewriter) distinctPass() error {
	if !hasWord(r.toks, "distinct") {
		return nil
	}
	out := make([]token, 0, len(r.toks)+16)
	var closes pending
	for i := 0; i < len(r.toks); i++ {
		out = closes.flush(out, i)
		is := r.toks[i]
		negate, width := distinctAt(r.toks, i)
		if width == 0 {
			out = append(out, is)
			continue
		}
		start := leftOperandStart(out, len(out))
		if start == len(out) {
			return syntaxError(r.src, is)
		}
		end := rightOperandEnd(r.toks, i+width)
		if end == i+width {
			return syntaxError(r.src, tokenOrEOF(r.src, r.toks, end))
		}
		if err := r.spend(len(out)-start+end-i, is); err != nil {
			return err
		}
		space := out[start].space
		left := operand(append([]token(nil), out[start:]...), is)
		out = out[:start]
		if negate {
			out = append(out, synth(tkWord, "not", is, space))
			space = true
		}
		out = append(out, withSpace(left, space)...)
		out = append(out, synth(tkOp, "<=>", is, true))
		right := r.toks[i+width : end]
		if primaryStart(right, len(right)-1) != 0 {
			out = append(out, synth(tkOp, "(", is, true))
			closes.add(end, synth(tkOp, ")", is, false))
			r.toks[i+width].space = false
		} else {
			r.toks[i+width].space = true
		}
		i += width - 1
	}
	r.toks = closes.flush(out, len(r.toks))
	return nil
}

// distinctAt reports whether toks[i] starts IS [NOT] DISTINCT FROM: the
// number of its words (0 if it does not) and whether the test is negated
// (IS DISTINCT FROM is NOT <=>).
func distinctAt(toks []token, i int) (negate bool, width int) {
	if !toks[i].isWord("is") {
		return false, 0
	}
	if matchWords(toks, i+1, []string{"distinct", "from"}) {
		return true, 3
	}
	if matchWords(toks, i+1, []string{"not", "distinct", "from"}) {
		return false, 4
	}
	return false, 0
}

// leftOperandStart walks back from the IS at toks[i] to the start of its
// left operand.
func leftOperandStart(toks []token, i int) int {
	j := i - 1
	for j >= 0 {
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
		case t.isOp("(", "[", ",", ";"), t.kind == tkWord && leftBoundary[t.val]:
			return j + 1
		case t.isOp("=") && clauseIs(toks, j, "set"):
			return j + 1 // UPDATE ... SET col = <operand>
		}
		j--
	}
	return 0
}

// rightOperandEnd scans from toks[i] to the end of the right operand of IS.
// Two operands in a row mean the second is an alias, which ends it too.
func rightOperandEnd(toks []token, i int) int {
	prevOperand := false
	for j := i; j < len(toks); {
		t := toks[j]
		switch {
		case t.isOp("(", "["):
			k := matchParen(toks, j)
			if k < 0 {
				return len(toks)
			}
			j, prevOperand = k+1, true
			continue
		case t.isWord("case"):
			k := matchCase(toks, j)
			if k < 0 {
				return len(toks)
			}
			j, prevOperand = k+1, true
			continue
		case t.isOp(")", "]", ",", ";"), t.kind == tkWord && rightStop[t.val]:
			return j
		}
		isOperand := t.isOperand()
		if isOperand && prevOperand {
			return j
		}
		prevOperand = isOperand
		j++
	}
	return len(toks)
}

// operand returns toks, parenthesised unless they form one primary.
func operand(toks []token, at token) []token {
	if primaryStart(toks, len(toks)-1) == 0 {
		return toks
	}
	return concat([]token{synth(tkOp, "(", at, true)}, withSpace(toks, false), []token{synth(tkOp, ")", at, false)})
}
