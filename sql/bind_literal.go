package sql

import (
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/test_driver"
)

// isNumberLiteral reports whether n is a number written as a literal,
// perhaps in parentheses: PostgreSQL folds a minus sign into such a
// literal before typing it, and into nothing else.
func isNumberLiteral(n ast.ExprNode) bool {
	for {
		p, ok := n.(*ast.ParenthesesExpr)
		if !ok {
			break
		}
		n = p.Expr
	}
	v, ok := n.(*test_driver.ValueExpr)
	if !ok {
		return false
	}
	switch v.Kind() {
	case test_driver.KindInt64, test_driver.KindUint64, test_driver.KindFloat32, test_driver.KindFloat64, test_driver.KindMysqlDecimal:
		return true
	}
	return false
}
