package binder

import (
	"streamdb/expr"
	"streamdb/sqlerr"
	"streamdb/types"
)

// BooleanCondition checks the argument of a WHERE, HAVING or JOIN/ON
// clause: a boolean, or an untyped literal or parameter, which is read as
// one ('true', NULL, $1), as PostgreSQL coerces an unknown-type operand.
// Any other type is 42804: PostgreSQL casts nothing else to boolean here.
func BooleanCondition(e expr.Expr, clause string) (expr.Expr, error) {
	switch t := e.Type(); t {
	case types.Bool:
		return e, nil
	case types.Unknown:
		return expr.Cast(e, types.Bool)
	default:
		return nil, sqlerr.New(sqlerr.DatatypeMismatch, "argument of %s must be type boolean, not type %s", clause, t)
	}
}
