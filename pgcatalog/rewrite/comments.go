package rewrite

import (
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/opcode"

	"streamdb/pgcatalog"
	"streamdb/sqlerr"
)

// colDescription is col_description(table OID, column number): a CASE
// over the columns of e's relations that have a comment.
func colDescription(e pgcatalog.Engine, args []ast.ExprNode) (ast.ExprNode, error) {
	if len(args) != 2 {
		return nil, sqlerr.New(sqlerr.UndefinedFunction, "function col_description takes a table OID and a column number")
	}
	c := &ast.CaseExpr{}
	for _, r := range e.Relations() {
		for i, col := range r.Columns {
			if col.Comment == "" {
				continue
			}
			when := &ast.BinaryOperationExpr{Op: opcode.LogicAnd,
				L: eq(args[0], value(r.OID)), R: eq(args[1], value(int64(i+1)))}
			c.WhenClauses = append(c.WhenClauses, &ast.WhenClause{Expr: when, Result: value(col.Comment)})
		}
	}
	if len(c.WhenClauses) == 0 {
		return value(nil), nil
	}
	return c, nil
}
