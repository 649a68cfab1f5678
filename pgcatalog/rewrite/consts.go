package rewrite

import (
	"strconv"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
)

// Constants of the syntax tree, read and written.

// BoolExpr is a boolean constant as the binder types it (a bare true
// would be read as an integer).
func BoolExpr(b bool) ast.ExprNode {
	if b {
		return eq(value(int64(1)), value(int64(1)))
	}
	return eq(value(int64(1)), value(int64(0)))
}

// IsNullConst reports whether x is the literal NULL.
func IsNullConst(x ast.ExprNode) bool {
	if p, ok := x.(*ast.ParenthesesExpr); ok {
		return IsNullConst(p.Expr)
	}
	c, ok := x.(ast.ValueExpr)
	return ok && c.GetValue() == nil
}

// ConstBool reads a Boolean literal (true, false, or a string such as
// 'on' or 't').
func ConstBool(x ast.ExprNode) (bool, bool) {
	if p, ok := x.(*ast.ParenthesesExpr); ok {
		return ConstBool(p.Expr)
	}
	c, ok := x.(ast.ValueExpr)
	if !ok {
		return false, false
	}
	switch b := c.GetValue().(type) {
	case int64:
		return b != 0, true
	case uint64:
		return b != 0, true
	case bool:
		return b, true
	case string:
		return parseBool(b)
	}
	return false, false
}

// parseBool reads a Boolean setting's spelling as PostgreSQL does.
func parseBool(v string) (value, ok bool) {
	switch strings.ToLower(strings.Trim(strings.TrimSpace(v), "'")) {
	case "on", "true", "yes", "1", "t", "y":
		return true, true
	case "off", "false", "no", "0", "f", "n":
		return false, true
	}
	return false, false
}

// ConstInt returns the value of an integer literal, signed or in
// parentheses.
func ConstInt(x ast.ExprNode) (int64, bool) {
	switch c := x.(type) {
	case *ast.ParenthesesExpr:
		return ConstInt(c.Expr)
	case *ast.UnaryOperationExpr:
		if n, ok := ConstInt(c.V); ok && c.Op.String() == "minus" {
			return -n, true
		}
		return 0, false
	case ast.ValueExpr:
		switch n := c.GetValue().(type) {
		case int64:
			return n, true
		case uint64:
			return int64(n), n <= 1<<63-1
		case string:
			i, err := strconv.ParseInt(n, 10, 64)
			return i, err == nil
		}
	}
	return 0, false
}
