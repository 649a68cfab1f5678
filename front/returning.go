package front

import (
	"github.com/pingcap/tidb/pkg/parser/ast"

	"streamdb/sqlerr"
)

// splitReturning splits an INSERT, UPDATE or DELETE into the statement and
// the tokens of its RETURNING list (nil when it has none). RETURNING is a
// reserved word in PostgreSQL, so the first one outside parentheses starts
// the clause.
func splitReturning(toks []token) (stmt, list []token, kw token, ok bool) {
	if len(toks) == 0 || !toks[0].isWord("insert", "update", "delete") {
		return toks, nil, token{}, false
	}
	depth := 0
	for i, t := range toks {
		switch {
		case t.isOp("("):
			depth++
		case t.isOp(")"):
			depth--
		case depth == 0 && t.isWord("returning"):
			return toks[:i], toks[i+1:], t, true
		}
	}
	return toks, nil, token{}, false
}

// parseReturning parses a RETURNING list as the select list of "SELECT
// list". Its parameter markers are numbered in the list's own text
// (rendered.params), which ReturningStatement hands the binder.
func parseReturning(src string, kw token, list []token) ([]*ast.SelectField, *rendered, error) {
	if len(list) == 0 {
		return nil, nil, syntaxError(src, eofToken(src))
	}
	rw, err := rewrite(src, list)
	if err != nil {
		return nil, nil, err
	}
	sel := synth(tkWord, "select", kw, false)
	node, r, err := parseTiDB(src, concat([]token{sel}, withSpace(rw.toks, true)), eofToken(src))
	if err != nil {
		return nil, nil, err
	}
	s, ok := node.(*ast.SelectStmt)
	if !ok || s.Fields == nil || s.From != nil || s.Where != nil || s.GroupBy != nil || s.Having != nil ||
		s.OrderBy != nil || s.Limit != nil || s.Distinct {
		return nil, nil, errorAt(src, list[0], sqlerr.SyntaxError, "syntax error in RETURNING list")
	}
	return s.Fields.Fields, &r, nil
}

// ReturningStatement is st as seen from its RETURNING list: positions of
// the list's AST nodes map to the user's text through it, and its
// parameter markers are the list's ($n in the order they appear there).
// It is st when there is no RETURNING list.
func (st *Statement) ReturningStatement() *Statement {
	if st == nil || st.returning == nil {
		return st
	}
	c := *st
	c.rendered = st.returning
	c.Rewritten = st.returning.text
	c.Params = st.returning.params
	return &c
}
