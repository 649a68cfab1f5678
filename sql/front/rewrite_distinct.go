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
func (r *rewriter) distinctPass() error {
	for {
		i, negate, width := findDistinct(r.toks)
		if i < 0 {
			return nil
		}
		is := r.toks[i]
		start := leftOperandStart(r.toks, i)
		if start == i {
			return syntaxError(r.src, is)
		}
		end := rightOperandEnd(r.toks, i+width)
		if end == i+width {
			return syntaxError(r.src, tokenOrEOF(r.src, r.toks, end))
		}
		left := operand(r.toks[start:i], is)
		right := operand(r.toks[i+width:end], is)
		var repl []token
		if negate {
			repl = append(repl, synth(tkWord, "not", is, r.toks[start].space))
			left = withSpace(left, true)
		} else {
			left = withSpace(left, r.toks[start].space)
		}
		repl = append(repl, left...)
		repl = append(repl, synth(tkOp, "<=>", is, true))
		repl = append(repl, withSpace(right, true)...)
		r.toks = concat(r.toks[:start], repl, r.toks[end:])
	}
}

// findDistinct finds the first IS [NOT] DISTINCT FROM; it returns the index
// of IS, whether the test is negated (IS DISTINCT FROM is NOT <=>), and the
// number of words, or -1.
func findDistinct(toks []token) (int, bool, int) {
	for i, t := range toks {
		if !t.isWord("is") {
			continue
		}
		if matchWords(toks, i+1, []string{"distinct", "from"}) {
			return i, true, 3
		}
		if matchWords(toks, i+1, []string{"not", "distinct", "from"}) {
			return i, false, 4
		}
	}
	return -1, false, 0
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
