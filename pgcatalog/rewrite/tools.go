package rewrite

import (
	"github.com/pingcap/tidb/pkg/parser/ast"

	"streamdb/sql/front"
	"streamdb/sqlerr"
)

// Catalog functions that client tools call when they connect or
// introspect (pg_dump: pg_is_in_recovery, acldefault), answered as
// PostgreSQL 15 answers them for a database of streamdb's objects.

// toolCall substitutes the calls of this file's functions; ok is false
// for any other function.
func toolCall(name string, args []ast.ExprNode) (out ast.ExprNode, ok bool, err error) {
	switch name {
	case "pg_is_in_recovery":
		if len(args) != 0 {
			return nil, true, sqlerr.New(sqlerr.UndefinedFunction, "function pg_is_in_recovery takes no arguments")
		}
		// A standby of an HA group refuses connections (57P03), so a
		// session always runs on the active server.
		return BoolExpr(false), true, nil
	case "acldefault":
		// The catalogs' ACL columns are NULL (the owner's default
		// privileges, as in PostgreSQL for an object never granted
		// on), and so is their default: pg_dump then dumps no GRANT.
		if len(args) != 2 {
			return nil, true, sqlerr.New(sqlerr.UndefinedFunction, "function acldefault takes an object kind and an owner OID")
		}
		return nullTextExpr(), true, nil
	case "pg_get_triggerdef", "pg_get_statisticsobjdef", "pg_get_ruledef", "pg_get_policydef":
		// streamdb has no triggers, statistics objects, rules or
		// policies: no OID names one.
		return nullTextExpr(), true, nil
	}
	return nil, false, nil
}

// nullTextExpr is NULL::text.
func nullTextExpr() ast.ExprNode {
	return &ast.FuncCallExpr{FnName: ast.NewCIStr(front.CastFunc), Args: []ast.ExprNode{value(nil), value("text")}}
}
