package binder

import (
	"github.com/pingcap/tidb/pkg/parser/ast"

	"streamdb/expr"
	"streamdb/sqlerr"
	"streamdb/types"
)

// AssignTo checks that e may be stored in col and casts it there
// (PostgreSQL's assignment rules, as for INSERT).
func AssignTo(e expr.Expr, col types.Column, node ast.ExprNode, params *Params) (expr.Expr, error) {
	if !Assignable(e.Type(), col.Type) {
		return nil, sqlerr.New(sqlerr.DatatypeMismatch, "column %q is of type %s but expression is of type %s", col.Name, col.Type, e.Type()).
			WithHint("You will need to rewrite or cast the expression.").
			WithPosition(params.stmt.Position(node.OriginTextPosition()))
	}
	cast, err := expr.CastWithModifier(e, col.Type, col.Mod, false)
	if err != nil {
		// A literal that does not convert (22P02, 22003, ...).
		return nil, params.at(node, err)
	}
	params.note(cast)
	return cast, nil
}

// Assignable reports whether a value of type from may be stored in a
// column of type to without an explicit cast (PostgreSQL's assignment
// casts): unknown literals and parameters convert to anything, numbers to
// numbers, anything to text, timestamps and dates among themselves.
func Assignable(from, to types.Type) bool {
	switch {
	case from == types.Unknown || from == to:
		return true
	case to.IsString():
		return true
	case from.IsNumeric() && to.IsNumeric():
		return true
	case (from == types.Date || from.IsTime()) && (to == types.Date || to.IsTime()):
		return true
	case from.IsString() && to.IsString():
		return true
	case from.IsArray() && to.IsArray():
		// PostgreSQL's array coercion: an array takes the assignment
		// cast of its elements (a client's int2[] into an int4[] column).
		return Assignable(from.Elem(), to.Elem())
	}
	return false
}
