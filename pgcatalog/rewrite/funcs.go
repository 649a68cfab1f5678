package rewrite

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/opcode"

	"streamdb/front"
	"streamdb/pgcatalog"
	"streamdb/sqlerr"
)

// Catalog and session functions that tools call (version(),
// current_setting('x'), 'pg_class'::regclass, obj_description(oid), ...).
// Their answers come from the session and the catalog, which the stateless
// expression layer cannot see, so they are substituted into the statement's
// syntax tree before it is bound:
//
//   - a function of the session alone (version(), current_database(),
//     current_schema(), current_setting('name')) becomes its value;
//   - a cast of a string constant to regclass, regtype or regproc becomes
//     the OID it names (an unknown name is an error, as in PostgreSQL);
//     a cast of anything else to an OID type is a cast to bigint, so OIDs
//     stay numbers;
//   - a function of a catalog object (obj_description, pg_get_viewdef,
//     pg_get_indexdef, pg_get_constraintdef, pg_get_userbyid) becomes a
//     CASE over the objects the catalog holds when the statement is
//     prepared, so it works on any argument, a column included;
//   - a ~ b (REGEXP after the front layer) becomes a call of the regular
//     expression match.
//
// A prepared statement keeps the answers of when it was prepared.

// serverVersionString is what version() says. Tools parse the PostgreSQL
// version from it, so it starts as PostgreSQL's does.
const serverVersionString = "PostgreSQL 15.0 on x86_64-pc-linux-gnu, compiled by streamdb (a streaming database speaking PostgreSQL's protocol), 64-bit"

// Session is what the substitution reads of the session whose statement
// it rewrites; package sql implements it. Each method answers from the
// session as it is when the statement is prepared.
type Session interface {
	// Catalog is the engine the catalog's answers are computed from.
	Catalog() pgcatalog.Engine
	// DatabaseName is current_database(): the database the client named.
	DatabaseName() string
	// Setting is current_setting(key), key lower-cased: a session
	// parameter's value or a server setting's; false when no parameter
	// has that name.
	Setting(key string) (string, bool)
	// BackendPID is pg_backend_pid(): the pid of the connection's
	// BackendKeyData, 0 without a client connection.
	BackendPID() int64
	// PrivilegeRole is the role a privilege function's optional first
	// argument names (arg nil: the session's own role). An unknown role
	// is an error (42704), one not given as a literal 0A000.
	PrivilegeRole(arg ast.ExprNode) (Role, error)
	// Call substitutes the calls whose answers need more of the session
	// than this interface gives (set_config, advisory locks): ok is
	// false for any other function. It is asked first,
	// of every function of CatalogFuncs.
	Call(name string, args []ast.ExprNode) (out ast.ExprNode, ok bool, err error)
}

// Statement rewrites the queries and DML statements in place; other
// statements are left as they are.
func Statement(node any, s Session) error {
	var n ast.Node
	switch x := node.(type) {
	case *ast.SelectStmt, *ast.SetOprStmt, *ast.InsertStmt, *ast.UpdateStmt, *ast.DeleteStmt:
		n = x.(ast.Node)
	default:
		return nil
	}
	if sel, ok := node.(*ast.SelectStmt); ok && sel.Fields != nil {
		for _, f := range sel.Fields.Fields {
			showRegName(f)
		}
	}
	v := &catalogFuncs{s: s, e: s.Catalog()}
	n.Accept(v)
	return v.err
}

// catalogFuncs is the walk of one statement.
type catalogFuncs struct {
	s   Session
	e   pgcatalog.Engine
	err error
	// displayed are the casts to text that regText made, left as they are.
	displayed map[*ast.FuncCallExpr]bool
}

func (v *catalogFuncs) Enter(n ast.Node) (ast.Node, bool) {
	switch x := n.(type) {
	case *ast.FuncCallExpr:
		v.regText(x)
	case *ast.SelectField:
		regTextName(x)
	}
	if f, ok := n.(*ast.SelectField); ok && f.Expr != nil && f.AsName.L == "" && f.WildCard == nil {
		// The column keeps the function's name, as in PostgreSQL.
		switch x := f.Expr.(type) {
		case *ast.FuncCallExpr:
			if name := arrayColumnName(x); name != "" {
				f.AsName = ast.NewCIStr(name)
			} else if seq, ok := strings.CutPrefix(x.FnName.L, front.SequenceFuncPrefix); ok {
				f.AsName = ast.NewCIStr(seq)
			} else if CatalogFuncs[x.FnName.L] {
				f.AsName = ast.NewCIStr(x.FnName.L)
				if typ, ok := strings.CutPrefix(x.FnName.L, "to_"); ok && len(x.Args) == 1 {
					// A selected to_regproc of a constant shows the name.
					if name, ok := ConstString(x.Args[0]); ok {
						if shown, err := pgcatalog.OIDDisplay(v.e, typ, name); err == nil {
							f.Expr = value(shown)
						}
					}
				}
			} else if typ, ok := ConstString(lastArg(x)); ok && x.FnName.L == front.CastFunc && OIDTypes[strings.ToLower(typ)] {
				typ = strings.ToLower(typ)
				f.AsName = ast.NewCIStr(typ)
				// A selected regclass, regtype or regproc of a
				// constant shows the name, as PostgreSQL prints it.
				if name, ok := ConstTextOperand(x.Args[0]); ok {
					shown, err := pgcatalog.OIDDisplay(v.e, typ, name)
					if err != nil {
						v.err = err
						return n, true
					}
					if shown != "" {
						f.Expr = value(shown)
					}
				}
			}
		case *ast.PatternRegexpExpr:
			f.AsName = ast.NewCIStr("?column?")
		case *ast.ColumnNameExpr:
			if n := x.Name; n.Table.L == "" && (n.Name.L == "current_schema" || n.Name.L == "current_catalog") {
				f.AsName = n.Name
			}
		}
	}
	return n, v.err != nil
}

// CatalogFuncs are the functions substituted here (pgcatalog.CatalogFuncs;
// sql adds those it answers itself, in its init functions).
var CatalogFuncs = pgcatalog.CatalogFuncs

func (v *catalogFuncs) Leave(n ast.Node) (ast.Node, bool) {
	if v.err != nil {
		return n, false
	}
	var out ast.Node
	switch x := n.(type) {
	case *ast.PatternRegexpExpr:
		out = regexpCall(x)
	case *ast.ColumnNameExpr:
		// Written without parentheses, as PostgreSQL allows.
		if c := x.Name; c.Table.L == "" && c.Schema.L == "" {
			switch c.Name.L {
			case "current_catalog", "current_schema":
				out, v.err = v.call(c.Name.L, nil)
			}
		}
	case *ast.FuncCallExpr:
		if x.FnName.L == front.CastFunc && len(x.Args) == 2 {
			out, v.err = v.cast(x)
		} else if x.FnName.L == front.SubscriptFunc {
			out = nameSubscript(x)
		} else if CatalogFuncs[x.FnName.L] {
			out, v.err = v.call(x.FnName.L, x.Args)
		}
	}
	if v.err != nil {
		return n, false
	}
	if out != nil {
		return out, true
	}
	return n, true
}

// arrayColumnName is PostgreSQL's column name for the array forms the
// front layer rewrote: "array", "?column?" for x = ANY (...), and for x[i]
// the name x would give.
func arrayColumnName(c *ast.FuncCallExpr) string {
	switch c.FnName.L {
	case front.ArrayFunc:
		return "array"
	case front.AnyFunc:
		return "?column?"
	case front.SubscriptFunc:
		if len(c.Args) > 0 {
			x := c.Args[0]
			for p, ok := x.(*ast.ParenthesesExpr); ok; p, ok = x.(*ast.ParenthesesExpr) {
				x = p.Expr
			}
			switch x := x.(type) {
			case *ast.FuncCallExpr:
				if n := arrayColumnName(x); n != "" {
					return n
				}
				return x.FnName.L
			case *ast.ColumnNameExpr:
				return x.Name.Name.L
			}
		}
		return "?column?"
	}
	return ""
}

func lastArg(c *ast.FuncCallExpr) ast.ExprNode {
	if len(c.Args) == 0 {
		return nil
	}
	return c.Args[len(c.Args)-1]
}

// Value is the constant x.
func Value(x any) ast.ExprNode { return ast.NewValueExpr(x, "", "") }

func value(x any) ast.ExprNode { return Value(x) }

// ConstString returns the value of a string literal.
func ConstString(x ast.ExprNode) (string, bool) {
	if x == nil {
		return "", false
	}
	if p, ok := x.(*ast.ParenthesesExpr); ok {
		return ConstString(p.Expr)
	}
	if c, ok := x.(ast.ValueExpr); ok {
		if s, ok := c.GetValue().(string); ok {
			return s, true
		}
	}
	return "", false
}

// call substitutes one catalog function call.
func (v *catalogFuncs) call(name string, args []ast.ExprNode) (ast.ExprNode, error) {
	s := v.s
	if out, ok, err := s.Call(name, args); ok {
		return out, err
	}
	if out, ok, err := v.toolCall(name, args); ok {
		return out, err
	}
	switch name {
	case "version":
		return value(serverVersionString), nil
	case "current_database", "current_catalog":
		return value(s.DatabaseName()), nil
	case "current_schema":
		return value("public"), nil
	case "current_setting":
		if len(args) < 1 || len(args) > 2 {
			return nil, sqlerr.New(sqlerr.UndefinedFunction, "function current_setting takes the setting's name and, optionally, missing_ok")
		}
		key, ok := ConstString(args[0])
		if !ok {
			return nil, sqlerr.New(sqlerr.FeatureNotSupported, "current_setting needs the setting's name as a string literal")
		}
		val, found := s.Setting(strings.ToLower(key))
		if !found {
			if len(args) == 2 {
				return value(nil), nil
			}
			return nil, sqlerr.New(sqlerr.UndefinedObject, "unrecognized configuration parameter %q", key)
		}
		return value(val), nil
	case "pg_get_expr":
		if len(args) < 2 {
			return nil, sqlerr.New(sqlerr.UndefinedFunction, "function pg_get_expr takes an expression and a relation OID")
		}
		// The catalogs store expressions as their SQL text.
		return args[0], nil
	case "pg_encoding_to_char":
		return value("UTF8"), nil
	case "pg_backend_pid":
		return value(s.BackendPID()), nil
	case "parse_ident":
		return parseIdentCall(args)
	case "pg_blocking_pids":
		// Sessions take no locks that block others: always the empty
		// array (as string_to_array('', ',') makes it).
		return &ast.FuncCallExpr{FnName: ast.NewCIStr("string_to_array"), Args: []ast.ExprNode{value(""), value(",")}}, nil
	case "col_description":
		return colDescription(v.e, args)
	case "has_table_privilege":
		return v.hasTablePrivilege(args)
	case "has_column_privilege":
		return v.hasColumnPrivilege(args)
	case "has_any_column_privilege":
		return v.hasAnyColumnPrivilege(args)
	case "pg_get_serial_sequence":
		return v.pgGetSerialSequence(args)
	case "shobj_description":
		return value(nil), nil
	case "pg_get_function_sqlbody":
		return value(nil), nil
	case "has_sequence_privilege":
		return v.hasSequencePrivilege(args)
	case "pg_function_is_visible", "pg_type_is_visible", "has_schema_privilege", "has_database_privilege",
		"has_function_privilege":
		// Privileges are checked when a statement runs; the catalog
		// answers yes, as for a superuser.
		return BoolExpr(true), nil
	}
	if len(args) == 0 {
		return nil, sqlerr.New(sqlerr.UndefinedFunction, "function %s needs an OID argument", name)
	}
	var answers []pgcatalog.Answer
	ce := v.e
	switch name {
	case "obj_description":
		catalog, _ := ConstString(lastArg(&ast.FuncCallExpr{Args: args}))
		answers = pgcatalog.ObjDescriptions(ce, len(args) == 2 && catalog == "pg_proc")
	case "pg_get_viewdef":
		if name, ok := ConstString(args[0]); ok {
			// pg_get_viewdef(text): the view of that name.
			oid, err := pgcatalog.ResolveOID(ce, "regclass", name)
			if err != nil {
				return nil, err
			}
			args[0] = value(oid)
		}
		answers = pgcatalog.ViewDefs(ce)
	case "pg_get_indexdef":
		if len(args) >= 2 {
			return v.indexColumn(args), nil
		}
		answers = pgcatalog.IndexDefs(ce)
	case "pg_get_constraintdef":
		pretty := false
		if len(args) >= 2 {
			pretty, _ = ConstBool(args[1])
		}
		answers = pgcatalog.ConstraintDefs(ce, pretty)
	case "pg_get_function_result":
		answers = pgcatalog.FunctionResults()
	case "pg_get_function_arguments", "pg_get_function_identity_arguments":
		answers = pgcatalog.FunctionArguments()
	case "to_regproc", "to_regprocedure", "to_regtype", "to_regclass", "to_regnamespace", "to_regrole":
		lit, ok := ConstTextOperand(args[0])
		if !ok {
			return RegCastOfText(ce, args[0], strings.TrimPrefix(name, "to_"), true), nil
		}
		oid, err := pgcatalog.ResolveOID(ce, strings.TrimPrefix(name, "to_"), lit)
		if err != nil {
			return value(nil), nil
		}
		return value(oid), nil
	case "pg_get_userbyid":
		answers = pgcatalog.UserNames(ce)
	}
	pairs := make([][2]any, len(answers))
	for i, a := range answers {
		pairs[i] = [2]any{a.OID, a.Text}
	}
	return caseOf(args[0], pairs), nil
}

// indexColumn is pg_get_indexdef(index, column, pretty): the name of the
// index's column-th column, 0 for the whole definition.
func (v *catalogFuncs) indexColumn(args []ast.ExprNode) ast.ExprNode {
	c := &ast.CaseExpr{}
	for _, d := range pgcatalog.IndexColumnDefs(v.e) {
		cond := &ast.BinaryOperationExpr{Op: opcode.LogicAnd, L: eq(args[0], value(d.OID)), R: eq(args[1], value(d.Column))}
		c.WhenClauses = append(c.WhenClauses, &ast.WhenClause{Expr: cond, Result: value(d.Text)})
	}
	if len(c.WhenClauses) == 0 {
		return value(nil)
	}
	return c
}

// caseOf is CASE x WHEN k THEN v ... END (NULL when nothing matches).
func caseOf(x ast.ExprNode, pairs [][2]any) ast.ExprNode {
	if len(pairs) == 0 {
		return value(nil)
	}
	c := &ast.CaseExpr{Value: x}
	for _, p := range pairs {
		c.WhenClauses = append(c.WhenClauses, &ast.WhenClause{Expr: value(p[0]), Result: value(p[1])})
	}
	return c
}

// OIDTypes are the OID alias types: a cast to one is a cast to bigint.
var OIDTypes = map[string]bool{
	"oid": true, "regclass": true, "regtype": true, "regproc": true, "regprocedure": true,
	"regnamespace": true, "regrole": true, "regoper": true, "xid": true, "cid": true,
}

// cast handles casts to the OID types and to PostgreSQL's internal name
// types; other casts are left to the binder.
func (v *catalogFuncs) cast(x *ast.FuncCallExpr) (ast.ExprNode, error) {
	typ, ok := ConstString(x.Args[1])
	if !ok {
		return nil, nil
	}
	typ = strings.TrimPrefix(strings.ToLower(strings.TrimSpace(typ)), "pg_catalog.")
	switch typ {
	case "name", `"char"`, "int2vector", "oidvector":
		x.Args[1] = value("text")
		return nil, nil
	case "name[]", `"char"[]`:
		x.Args[1] = value("text[]")
		return nil, nil
	}
	if elem, ok := strings.CutSuffix(typ, "[]"); ok && OIDTypes[elem] {
		// An array of OIDs is an array of bigint ('{16386,16399}'::oid[]
		// in pg_dump's queries).
		x.Args[1] = value("bigint[]")
		return nil, nil
	}
	if !OIDTypes[typ] {
		return nil, nil
	}
	if s, ok := ConstTextOperand(x.Args[0]); ok {
		oid, err := pgcatalog.ResolveOID(v.e, typ, s)
		if err != nil {
			return nil, err
		}
		return value(oid), nil
	}
	if regNameTypes[typ] && TextOperand(x.Args[0]) {
		return RegCastOfText(v.e, x.Args[0], typ, false), nil
	}
	x.Args[1] = value("bigint")
	return nil, nil
}

// regexpCall is a ~ b as regexp_like(a, b), a ~* b as regexp_like(a, b,
// 'i'), and a !~ b and a !~* b as their negations.
func regexpCall(x *ast.PatternRegexpExpr) ast.ExprNode {
	call := &ast.FuncCallExpr{FnName: ast.NewCIStr("regexp_like"), Args: []ast.ExprNode{x.Expr, x.Pattern}}
	if f, ok := x.Pattern.(*ast.FuncCallExpr); ok && f.FnName.L == front.RegexpICaseFunc && len(f.Args) == 1 {
		// a ~* b (front): regexp_like(a, b, 'i').
		call.Args = []ast.ExprNode{x.Expr, f.Args[0], ast.NewValueExpr("i", "", "")}
	}
	if x.Not {
		return &ast.UnaryOperationExpr{Op: opcode.Not, V: call}
	}
	return call
}

// Eq is l = r.
func Eq(l, r ast.ExprNode) ast.ExprNode {
	return &ast.BinaryOperationExpr{Op: opcode.EQ, L: l, R: r}
}

func eq(l, r ast.ExprNode) ast.ExprNode { return Eq(l, r) }

// catalogNameColumns are the catalog columns of PostgreSQL's type name,
// which streamdb's catalogs hold as text.
var catalogNameColumns = map[string]bool{
	"typname": true, "relname": true, "attname": true, "proname": true, "nspname": true, "conname": true,
	"rolname": true, "datname": true, "collname": true, "lanname": true, "amname": true, "extname": true,
}

// nameSubscript rewrites a subscript of a catalog name column
// (typname[0] = '_', pg_dump's test for an array type's name): a name
// is a fixed array of characters from 0, so x[i] is its character i+1,
// as substr(x, i + 1, 1). Other subscripts stay (nil).
func nameSubscript(x *ast.FuncCallExpr) ast.ExprNode {
	if len(x.Args) != 2 {
		return nil
	}
	col, ok := x.Args[0].(*ast.ColumnNameExpr)
	if !ok || !catalogNameColumns[col.Name.Name.L] {
		return nil
	}
	pos := &ast.BinaryOperationExpr{Op: opcode.Plus, L: x.Args[1], R: value(int64(1))}
	return &ast.FuncCallExpr{FnName: ast.NewCIStr("substr"), Args: []ast.ExprNode{col, pos, value(int64(1))}}
}
