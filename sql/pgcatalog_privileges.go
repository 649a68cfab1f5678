package sql

import (
	"maps"
	"slices"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/opcode"

	"streamdb/catalog"
	"streamdb/sql/front"
	"streamdb/sqlerr"
)

// tablePrivileges are the privileges has_table_privilege names, as
// PostgreSQL 15 spells them.
var tablePrivileges = map[string]bool{
	"SELECT": true, "INSERT": true, "UPDATE": true, "DELETE": true,
	"TRUNCATE": true, "REFERENCES": true, "TRIGGER": true,
}

// parseTablePrivileges reads a privilege list ('SELECT', 'insert,
// update', 'SELECT WITH GRANT OPTION') into the privileges a grant can
// give. One asked WITH GRANT OPTION is left out: only an owner or a
// superuser holds that (streamdb has no WITH GRANT OPTION), which
// holdsAny answers with no privilege named.
func parseTablePrivileges(list string) ([]string, error) {
	var out []string
	for _, given := range strings.Split(list, ",") {
		p := strings.ToUpper(strings.Join(strings.Fields(given), " "))
		priv, grantOption := strings.CutSuffix(p, " WITH GRANT OPTION")
		if !tablePrivileges[priv] {
			return nil, sqlerr.New(sqlerr.InvalidParameterValue, "unrecognized privilege type: %q", strings.TrimSpace(given))
		}
		if !grantOption {
			out = append(out, priv)
		}
	}
	return out, nil
}

// privilegeRole is a role as privilege checks see it.
type privilegeRole struct {
	e         *Engine
	name      string
	superuser bool
}

// holdsAny reports whether the role is a superuser, owns d, or holds one
// of privs on it (d nil: whether it is a superuser).
func (r privilegeRole) holdsAny(d *catalog.Descriptor, privs ...string) bool {
	if r.superuser {
		return true
	}
	if d == nil {
		return false
	}
	if r.e.roles.Owner(d) == r.name {
		return true
	}
	for _, p := range privs {
		if r.e.roles.Granted(d, r.name, p) {
			return true
		}
	}
	return false
}

// sessionRole is the session's role for privilege checks.
func (s *session) sessionRole() privilegeRole {
	return privilegeRole{e: s.e, name: s.user, superuser: s.roleSuperuser()}
}

// privilegeRoleNamed is the role has_table_privilege's first argument of
// three names (a constant), or the session's with two arguments.
func (s *session) privilegeRoleNamed(args []ast.ExprNode) (privilegeRole, error) {
	if len(args) == 2 || (&userFunctions{}).userFunction(args[0]) != "" {
		return s.sessionRole(), nil
	}
	name, ok := constTextOperand(args[0])
	if !ok {
		return privilegeRole{}, sqlerr.New(sqlerr.FeatureNotSupported, "has_table_privilege needs the role as a name in a string literal")
	}
	if name == s.user {
		return s.sessionRole(), nil
	}
	if name == BootstrapUser {
		return privilegeRole{e: s.e, name: name, superuser: true}, nil
	}
	r := s.e.roles.Role(name)
	if r == nil {
		return privilegeRole{}, sqlerr.New(sqlerr.UndefinedObject, "role %q does not exist", name)
	}
	return privilegeRole{e: s.e, name: name, superuser: r.Superuser}, nil
}

// hasTablePrivilege is has_table_privilege([role,] table, privileges):
// whether the role holds any of the privileges on the table, as
// PostgreSQL answers it. A table given by name must exist (42P01); given
// by OID, one that is no relation gives NULL. System tables may be read
// by everyone, as PostgreSQL grants SELECT on its catalogs to PUBLIC.
func (v *catalogFuncs) hasTablePrivilege(args []ast.ExprNode) (ast.ExprNode, error) {
	if len(args) != 2 && len(args) != 3 {
		return nil, sqlerr.New(sqlerr.UndefinedFunction, "function has_table_privilege takes an optional role, a table and a privilege list")
	}
	role, err := v.s.privilegeRoleNamed(args)
	if err != nil {
		return nil, err
	}
	table, list := args[len(args)-2], args[len(args)-1]
	privs, ok := constTextOperand(list)
	if !ok {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "has_table_privilege needs its privilege list as a string literal")
	}
	asked, err := parseTablePrivileges(privs)
	if err != nil {
		return nil, err
	}
	answers := map[int64]bool{}
	for _, d := range v.s.e.catalogObjects() {
		if oid := relationOID(d); oid != 0 {
			answers[oid] = d.Kind == catalog.KindSystem || role.holdsAny(d, asked...)
		}
	}
	if name, ok := constTextOperand(table); ok {
		oid, err := v.s.e.resolveOID("regclass", name)
		if err != nil {
			return nil, err
		}
		held, user := answers[oid]
		// A relation that is not the user's is a system table.
		return boolExpr(!user || held), nil
	}
	// A column named oid (pg_class.oid) is an OID; any other expression
	// is read as a relation's name (quote_ident(schemaname) || '.' ||
	// ...), which gives NULL when it names none.
	if !isOIDColumn(table) {
		table = v.s.e.regCastOfText(table, "regclass", true)
	}
	// CASE table WHEN oid THEN held ... ELSE (a system table's OID: true;
	// no relation's: NULL).
	c := &ast.CaseExpr{Value: table}
	oids := slices.Sorted(maps.Keys(answers))
	for _, oid := range oids {
		c.WhenClauses = append(c.WhenClauses, &ast.WhenClause{Expr: value(oid), Result: boolExpr(answers[oid])})
	}
	system := &ast.BinaryOperationExpr{Op: opcode.LT, L: table, R: value(int64(firstUserOID))}
	c.ElseClause = &ast.CaseExpr{WhenClauses: []*ast.WhenClause{{Expr: system, Result: boolExpr(true)}}}
	return c, nil
}

// isOIDColumn reports whether x is an OID: an integer, a column named oid
// (or attrelid, indrelid), or a cast to an OID type.
func isOIDColumn(x ast.ExprNode) bool {
	for p, ok := x.(*ast.ParenthesesExpr); ok; p, ok = x.(*ast.ParenthesesExpr) {
		x = p.Expr
	}
	if _, ok := constInt(x); ok {
		return true
	}
	switch x := x.(type) {
	case *ast.ColumnNameExpr:
		return x.Name.Name.L == "oid" || x.Name.Name.L == "attrelid" || x.Name.Name.L == "indrelid"
	case *ast.FuncCallExpr:
		if x.FnName.L != front.CastFunc || len(x.Args) != 2 {
			return false
		}
		typ, _ := constString(x.Args[1])
		typ = strings.ToLower(typ)
		return isOIDColumn(x.Args[0]) || oidTypes[typ] || typ == "bigint" || typ == "int8"
	}
	return false
}
