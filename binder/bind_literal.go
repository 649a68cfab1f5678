package binder

import (
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/opcode"
	"github.com/pingcap/tidb/pkg/parser/test_driver"
)

// isNumberLiteral reports whether n is a number written as a literal,
// perhaps in parentheses or negated: PostgreSQL folds a minus sign into
// such a literal before typing it, and into nothing else.
func isNumberLiteral(n ast.ExprNode) bool {
	for {
		switch e := n.(type) {
		case *ast.ParenthesesExpr:
			n = e.Expr
			continue
		case *ast.UnaryOperationExpr:
			if e.Op == opcode.Minus { // a literal folded with its sign
				n = e.V
				continue
			}
		}
		break
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
