package rewrite

import (
	"maps"
	"slices"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/opcode"

	"streamdb/front"
	"streamdb/pgcatalog"
	"streamdb/sqlerr"
)

// has_table_privilege; has_column_privilege and has_any_column_privilege
// are column_privileges.go's. The role and what it holds are the
// session's (Session.PrivilegeRole).

// Role is a role as the privilege functions ask it.
type Role interface {
	// Holds is, by pg_class OID of each relation of the catalog,
	// whether the role owns it, is a superuser, or holds one of privs on
	// it.
	Holds(privs []string) map[int64]bool
}

// tablePrivileges are the privileges has_table_privilege names, as
// PostgreSQL 15 spells them.
var tablePrivileges = map[string]bool{
	"SELECT": true, "INSERT": true, "UPDATE": true, "DELETE": true,
	"TRUNCATE": true, "REFERENCES": true, "TRIGGER": true,
}

// parsePrivileges reads a privilege list ('SELECT', 'insert, update',
// 'SELECT WITH GRANT OPTION') into the privileges a grant can give, each
// one of known. One asked WITH GRANT OPTION is left out: only an owner
// or a superuser holds that (streamdb has no WITH GRANT OPTION), which
// holdsAny answers with no privilege named.
func parsePrivileges(list string, known map[string]bool) ([]string, error) {
	var out []string
	for _, given := range strings.Split(list, ",") {
		p := strings.ToUpper(strings.Join(strings.Fields(given), " "))
		priv, grantOption := strings.CutSuffix(p, " WITH GRANT OPTION")
		if !known[priv] {
			return nil, sqlerr.New(sqlerr.InvalidParameterValue, "unrecognized privilege type: %q", strings.TrimSpace(given))
		}
		if !grantOption {
			out = append(out, priv)
		}
	}
	return out, nil
}

// privilegeArgs reads the arguments of has_<object>_privilege([role,]
// object, privileges), named fn: the role asked about (the session's
// when none is given), the object's operand, and the privileges asked
// among known (a string literal).
func (v *catalogFuncs) privilegeArgs(fn, object string, args []ast.ExprNode, known map[string]bool) (Role, ast.ExprNode, []string, error) {
	if len(args) != 2 && len(args) != 3 {
		return nil, nil, nil, sqlerr.New(sqlerr.UndefinedFunction, "function %s takes an optional role, a %s and a privilege list", fn, object)
	}
	var roleArg ast.ExprNode
	if len(args) == 3 {
		roleArg = args[0]
	}
	role, err := v.s.PrivilegeRole(roleArg)
	if err != nil {
		return nil, nil, nil, err
	}
	privs, ok := ConstTextOperand(args[len(args)-1])
	if !ok {
		return nil, nil, nil, sqlerr.New(sqlerr.FeatureNotSupported, "%s needs its privilege list as a string literal", fn)
	}
	asked, err := parsePrivileges(privs, known)
	if err != nil {
		return nil, nil, nil, err
	}
	return role, args[len(args)-2], asked, nil
}

// hasTablePrivilege is has_table_privilege([role,] table, privileges):
// whether the role holds any of the privileges on the table, as
// PostgreSQL answers it. A table given by name must exist (42P01); given
// by OID, one that is no relation gives NULL. System tables may be read
// by everyone, as PostgreSQL grants SELECT on its catalogs to PUBLIC.
func (v *catalogFuncs) hasTablePrivilege(args []ast.ExprNode) (ast.ExprNode, error) {
	role, table, asked, err := v.privilegeArgs("has_table_privilege", "table", args, tablePrivileges)
	if err != nil {
		return nil, err
	}
	answers := role.Holds(asked)
	if name, ok := ConstTextOperand(table); ok {
		oid, err := pgcatalog.ResolveOID(v.e, "regclass", name)
		if err != nil {
			return nil, err
		}
		held, user := answers[oid]
		// A relation that is not the user's is a system table.
		return BoolExpr(!user || held), nil
	}
	// A column named oid (pg_class.oid) is an OID; any other expression
	// is read as a relation's name (quote_ident(schemaname) || '.' ||
	// ...), which gives NULL when it names none.
	if !isOIDColumn(table) {
		table = RegCastOfText(v.e, table, "regclass", true)
	}
	// CASE table WHEN oid THEN held ... ELSE (a system table's OID: true;
	// no relation's: NULL).
	c := &ast.CaseExpr{Value: table}
	oids := slices.Sorted(maps.Keys(answers))
	for _, oid := range oids {
		c.WhenClauses = append(c.WhenClauses, &ast.WhenClause{Expr: value(oid), Result: BoolExpr(answers[oid])})
	}
	system := &ast.BinaryOperationExpr{Op: opcode.LT, L: table, R: value(int64(pgcatalog.FirstUserOID))}
	c.ElseClause = &ast.CaseExpr{WhenClauses: []*ast.WhenClause{{Expr: system, Result: BoolExpr(true)}}}
	return c, nil
}

// isOIDColumn reports whether x is an OID: an integer, a column named oid
// (or attrelid, indrelid), or a cast to an OID type.
func isOIDColumn(x ast.ExprNode) bool {
	for p, ok := x.(*ast.ParenthesesExpr); ok; p, ok = x.(*ast.ParenthesesExpr) {
		x = p.Expr
	}
	if _, ok := ConstInt(x); ok {
		return true
	}
	switch x := x.(type) {
	case *ast.ColumnNameExpr:
		return x.Name.Name.L == "oid" || x.Name.Name.L == "attrelid" || x.Name.Name.L == "indrelid"
	case *ast.FuncCallExpr:
		if x.FnName.L != front.CastFunc || len(x.Args) != 2 {
			return false
		}
		typ, _ := ConstString(x.Args[1])
		typ = strings.ToLower(typ)
		return isOIDColumn(x.Args[0]) || OIDTypes[typ] || typ == "bigint" || typ == "int8"
	}
	return false
}
