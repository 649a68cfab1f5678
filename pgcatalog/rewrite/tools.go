package rewrite

import (
	"github.com/pingcap/tidb/pkg/parser/ast"

	"streamdb/front"
	"streamdb/pgcatalog"
	"streamdb/sqlerr"
)

// Catalog functions that client tools call when they connect or
// introspect (pg_dump: pg_is_in_recovery, acldefault), answered as
// PostgreSQL 15 answers them for a database of streamdb's objects.

// toolCall substitutes the calls of this file's functions; ok is false
// for any other function.
func (v *catalogFuncs) toolCall(name string, args []ast.ExprNode) (out ast.ExprNode, ok bool, err error) {
	switch name {
	case "pg_is_in_recovery":
		if len(args) != 0 {
			return nil, true, sqlerr.New(sqlerr.UndefinedFunction, "function pg_is_in_recovery takes no arguments")
		}
		// A standby of an HA group refuses connections (57P03), so a
		// session always runs on the active server.
		return BoolExpr(false), true, nil
	case "acldefault":
		// A relation's or sequence's owner holds all its privileges
		// ('r': arwdDxt, 's': rwU), which pg_dump compares relacl with
		// to dump the GRANTs. The other kinds' ACL columns are NULL, and
		// so is their default.
		if len(args) != 2 {
			return nil, true, sqlerr.New(sqlerr.UndefinedFunction, "function acldefault takes an object kind and an owner OID")
		}
		return v.aclDefault(args[0], args[1]), true, nil
	case "pg_get_triggerdef", "pg_get_statisticsobjdef", "pg_get_ruledef", "pg_get_policydef":
		// streamdb has no triggers, statistics objects, rules or
		// policies: no OID names one.
		return nullTextExpr(), true, nil
	}
	return nil, false, nil
}

// aclDefault is acldefault(kind, owner) as an expression: CASE kind WHEN
// 'r' THEN (CASE owner WHEN oid THEN '{name=arwdDxt/name}' ...) WHEN 's'
// THEN ... END, NULL for other kinds and OIDs.
func (v *catalogFuncs) aclDefault(kind, owner ast.ExprNode) ast.ExprNode {
	byOwner := func(privs string) ast.ExprNode {
		c := &ast.CaseExpr{Value: owner, ElseClause: nullTextExpr()}
		for _, r := range v.e.Roles() {
			c.WhenClauses = append(c.WhenClauses, &ast.WhenClause{Expr: value(r.OID), Result: value(pgcatalog.ACLDefault(r.Name, privs))})
		}
		return c
	}
	return &ast.CaseExpr{Value: kind, ElseClause: nullTextExpr(), WhenClauses: []*ast.WhenClause{
		{Expr: value("r"), Result: byOwner("arwdDxt")},
		{Expr: value("s"), Result: byOwner("rwU")},
	}}
}

// nullTextExpr is NULL::text.
func nullTextExpr() ast.ExprNode {
	return &ast.FuncCallExpr{FnName: ast.NewCIStr(front.CastFunc), Args: []ast.ExprNode{value(nil), value("text")}}
}
