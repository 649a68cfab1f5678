package front

import "streamdb/sqlerr"

// MaxExprDepth bounds how deeply expressions nest: parentheses, CASE, and
// operator chains such as 1+1+...+1, each link of which is one level of the
// parsed tree. The binder enforces it exactly on the parsed tree (54001,
// as PostgreSQL's "stack depth limit exceeded").
const MaxExprDepth = 10000

// maxTokenNesting bounds nesting as the lexer sees it, before any parsing
// or rewriting: the open parentheses and CASEs plus the operators chained
// at each open level (a comma starts a new list item and its own chain).
// That count is never less than the depth of the parsed tree, so a query
// within it can be parsed and walked recursively without risk to the
// stack, and everything past it would fail the binder's exact check
// anyway unless its operators mix precedences in contrived ways (a sum of
// many long products). It is a multiple of MaxExprDepth so that the exact
// check, with its precise message, is the one users meet.
const maxTokenNesting = 10 * MaxExprDepth

// MaxSubqueryDepth bounds how deeply subqueries nest. PostgreSQL accepts
// 2000 nested scalar subqueries and stops at about 2500 ("stack depth
// limit exceeded"); binding and planning each level costs more than an
// expression's, so the bound is that much lower than MaxExprDepth.
const MaxSubqueryDepth = 2000

// depthError is the error for an expression nested past the limits.
func depthError(src string, t token) *sqlerr.Error {
	return errorAt(src, t, sqlerr.StatementTooComplex, "stack depth limit exceeded: expressions nest more than %d levels deep", MaxExprDepth).
		WithHint("Simplify the expression: fewer nested parentheses or chained operators (a long IN list is fine).")
}

// checkNesting refuses toks when their nesting, counted as maxTokenNesting
// describes, passes that bound. It takes one pass and constant work per
// token.
//
// It also refuses subqueries (a parenthesis opening SELECT, WITH or
// VALUES) nested past MaxSubqueryDepth.
func checkNesting(src string, toks []token) error {
	// ops[d] counts the operators chained at open level d; cur is the sum
	// of ops over the open levels plus the number of open levels. query[d]
	// says whether level d opened a subquery; queries counts those open.
	ops := []int{0}
	query := []bool{false}
	cur, queries := 0, 0
	for i, t := range toks {
		switch {
		case t.isOp("(", "[") || t.isWord("case"):
			sub := t.isOp("(") && i+1 < len(toks) && (toks[i+1].isWord("select") || toks[i+1].isWord("with") || toks[i+1].isWord("values"))
			ops = append(ops, 0)
			query = append(query, sub)
			cur++
			if sub {
				if queries++; queries > MaxSubqueryDepth {
					return errorAt(src, t, sqlerr.StatementTooComplex, "stack depth limit exceeded: subqueries nest more than %d levels deep", MaxSubqueryDepth).
						WithHint("Simplify the query: fewer nested subqueries.")
				}
			}
		case t.isOp(")", "]") || t.isWord("end"):
			if d := len(ops) - 1; d > 0 {
				cur -= ops[d] + 1
				ops = ops[:d]
				if query[d] {
					queries--
				}
				query = query[:d]
			}
			continue
		case t.isOp(",", ";"):
			d := len(ops) - 1
			cur -= ops[d]
			ops[d] = 0
			continue
		case t.kind == tkOp && !t.isOp("."), t.kind == tkWord && operatorWords[t.val]:
			ops[len(ops)-1]++
			cur++
		default:
			continue
		}
		if cur > maxTokenNesting {
			return depthError(src, t)
		}
	}
	return nil
}

// rewriteBudgetPerToken and rewriteBudgetBase bound the work of the token
// rewrites that wrap an operand already emitted (casts, ^, IS DISTINCT
// FROM, NULLS FIRST, FILTER, EXTRACT): each charges the tokens it scans
// and copies. Ordinary queries use a small fraction; chains that wrap ever
// longer operands (x::int::int::..., a ^ b ^ c ^ ...) would otherwise take
// time quadratic in their length, and are refused when they run out.
const (
	rewriteBudgetPerToken = 32
	rewriteBudgetBase     = 1 << 20
)

// spend charges n tokens of rewrite work against the statement's budget;
// past it the statement is refused with 54001 at t.
func (r *rewriter) spend(n int, t token) error {
	r.budget -= n
	if r.budget < 0 {
		return errorAt(r.src, t, sqlerr.StatementTooComplex, "statement is too complex: operators, casts or calls chain or nest too deeply").
			WithHint("Simplify the expression: fewer nested parentheses or chained operators (a long IN list is fine).")
	}
	return nil
}
