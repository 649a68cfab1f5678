package binder

import (
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/pingcap/tidb/pkg/parser/opcode"
	"github.com/pingcap/tidb/pkg/parser/test_driver"

	"streamdb/sqlerr"
)

// positionOf reads a GROUP BY or ORDER BY item that is an integer
// constant (negative ones included) as a 1-based position in the select
// list, as PostgreSQL does: GROUP BY -3 is a position that does not exist,
// not a constant to group by.
func positionOf(n ast.ExprNode) (int, bool) {
	switch n := n.(type) {
	case *ast.PositionExpr:
		if n.P == nil {
			return n.N, true
		}
	case *test_driver.ValueExpr:
		if n.Kind() == test_driver.KindInt64 && !isBoolLiteral(n) {
			return int(n.GetInt64()), true
		}
	case *ast.UnaryOperationExpr:
		if n.Op == opcode.Minus {
			if v, ok := n.V.(*test_driver.ValueExpr); ok && v.Kind() == test_driver.KindInt64 && !isBoolLiteral(v) {
				return -int(v.GetInt64()), true
			}
		}
	}
	return 0, false
}

// isBoolLiteral reports whether v is TRUE or FALSE, which the TiDB parser
// reads as the integers 1 and 0.
func isBoolLiteral(v *test_driver.ValueExpr) bool {
	return v.Type.GetFlag()&mysql.IsBooleanFlag != 0
}

// nonIntegerConstant refuses a GROUP BY or ORDER BY item that is a bare
// constant other than an integer (NULL, a string, a decimal), as
// PostgreSQL does: it is neither a position nor worth grouping by.
func nonIntegerConstant(n ast.ExprNode, clause string) error {
	v, ok := n.(*test_driver.ValueExpr)
	if !ok {
		return nil
	}
	switch v.Kind() {
	case test_driver.KindNull, test_driver.KindString, test_driver.KindBytes, test_driver.KindFloat32, test_driver.KindFloat64, test_driver.KindMysqlDecimal:
		return sqlerr.New(sqlerr.SyntaxError, "non-integer constant in %s", clause)
	}
	return nil
}
