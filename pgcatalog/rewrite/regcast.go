package rewrite

import (
	"sort"
	"strconv"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/test_driver"

	"streamdb/front"
	"streamdb/pgcatalog"
)

// Casts to the OID alias types whose operand is text known only when the
// statement runs ($1::regtype, $1::text::regtype: pgx's LoadType and
// psycopg's TypeInfo.fetch), and the text of such an OID (oid::regtype::text),
// as CASE expressions over the names the catalog holds when the statement
// is prepared:
//
//	x::regtype        CASE lower(btrim(x::text)) WHEN 'int4' THEN 23 ...
//	                  ELSE regtypein(x::text) END
//	(oid)::regtype::text  CASE oid WHEN 23 THEN 'integer' ... ELSE oid::text END
//
// regtypein (and regclassin, ...) in the expression layer reads an OID
// written as digits and gives PostgreSQL's error for any other name.
// Names are matched case-insensitively, without quoting.

// regNameTypes are the OID alias types whose input reads a name.
var regNameTypes = pgcatalog.RegNameTypes

// TextOperand reports whether x is text by its form: a string literal, a
// parameter (whose type the cast decides in PostgreSQL) or a cast to a
// string type.
func TextOperand(x ast.ExprNode) bool {
	for p, ok := x.(*ast.ParenthesesExpr); ok; p, ok = x.(*ast.ParenthesesExpr) {
		x = p.Expr
	}
	switch x := x.(type) {
	case *test_driver.ParamMarkerExpr:
		return true
	case *ast.FuncCallExpr:
		if x.FnName.L == front.CastFunc && len(x.Args) == 2 {
			t, _ := ConstString(x.Args[1])
			switch strings.ToLower(strings.TrimSpace(t)) {
			case "text", "varchar", "character varying", "name", "pg_catalog.text":
				return true
			}
		}
	}
	_, ok := ConstString(x)
	return ok
}

// ConstTextOperand is the value of a string literal, also under a cast to text
// ('numeric'::text).
func ConstTextOperand(x ast.ExprNode) (string, bool) {
	if s, ok := ConstString(x); ok {
		return s, true
	}
	for p, ok := x.(*ast.ParenthesesExpr); ok; p, ok = x.(*ast.ParenthesesExpr) {
		x = p.Expr
	}
	if c, ok := x.(*ast.FuncCallExpr); ok && c.FnName.L == front.CastFunc && len(c.Args) == 2 && TextOperand(c) {
		return ConstTextOperand(c.Args[0])
	}
	return "", false
}

// RegCastOfText is x::typ for a text operand x that is not a constant,
// over the names of e's catalog. orNull: an unknown name gives NULL
// (to_regtype) instead of an error.
func RegCastOfText(e pgcatalog.Engine, x ast.ExprNode, typ string, orNull bool) ast.ExprNode {
	asText := &ast.FuncCallExpr{FnName: ast.NewCIStr(front.CastFunc), Args: []ast.ExprNode{x, value("text")}}
	// Quotes are dropped ('"public"."t"', as tools build names with
	// quote_ident); names are then matched without case.
	unquoted := &ast.FuncCallExpr{FnName: ast.NewCIStr("replace"), Args: []ast.ExprNode{asText, value(`"`), value("")}}
	key := &ast.FuncCallExpr{FnName: ast.NewCIStr("lower"), Args: []ast.ExprNode{
		&ast.FuncCallExpr{FnName: ast.NewCIStr("btrim"), Args: []ast.ExprNode{unquoted}}}}
	names := pgcatalog.RegNames(e, typ)
	keys := make([]string, 0, len(names))
	for k := range names {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	c := &ast.CaseExpr{Value: key}
	for _, k := range keys {
		c.WhenClauses = append(c.WhenClauses, &ast.WhenClause{Expr: value(k), Result: value(names[k])})
	}
	in := strings.TrimSuffix(typ, "edure") + "in"
	if orNull {
		c.ElseClause = &ast.FuncCallExpr{FnName: ast.NewCIStr(front.CastFunc), Args: []ast.ExprNode{value(nil), value("bigint")}}
	} else {
		c.ElseClause = &ast.FuncCallExpr{FnName: ast.NewCIStr(in), Args: []ast.ExprNode{asText}}
	}
	return c
}

// regDisplayOf is the text of an OID of type typ (oid::regtype::text): the
// name PostgreSQL prints, the number for an OID it does not know.
func regDisplayOf(e pgcatalog.Engine, oid ast.ExprNode, typ string) ast.ExprNode {
	names := pgcatalog.RegNames(e, typ)
	seen := map[int64]bool{}
	var pairs [][2]any
	for _, name := range sortedKeys(names) {
		n := names[name]
		if seen[n] {
			continue
		}
		seen[n] = true
		shown := name
		switch typ {
		case "regnamespace", "regrole":
			shown = pgcatalog.QuoteIdent(name)
		default:
			s, err := pgcatalog.OIDDisplay(e, typ, strconv.FormatInt(n, 10))
			if err != nil || s == "" {
				continue
			}
			shown = s
		}
		pairs = append(pairs, [2]any{n, shown})
	}
	if !seen[0] {
		// The invalid OID prints as "-" in every OID alias type.
		pairs = append(pairs, [2]any{int64(0), "-"})
	}
	sort.Slice(pairs, func(i, j int) bool { return pairs[i][0].(int64) < pairs[j][0].(int64) })
	c := &ast.CaseExpr{Value: oid}
	for _, p := range pairs {
		c.WhenClauses = append(c.WhenClauses, &ast.WhenClause{Expr: value(p[0]), Result: value(p[1])})
	}
	c.ElseClause = &ast.FuncCallExpr{FnName: ast.NewCIStr(front.CastFunc), Args: []ast.ExprNode{oid, value("text")}}
	return c
}

func sortedKeys(m map[string]int64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// regText rewrites c, when it is a cast to text of a cast to an OID alias
// type of something not constant (oid::regtype::text), into a cast of the
// name the OID has.
func (v *catalogFuncs) regText(c *ast.FuncCallExpr) {
	if v.displayed[c] || c.FnName.L != front.CastFunc || len(c.Args) != 2 || !TextOperand(c) {
		return
	}
	inner := c.Args[0]
	for p, ok := inner.(*ast.ParenthesesExpr); ok; p, ok = inner.(*ast.ParenthesesExpr) {
		inner = p.Expr
	}
	ic, ok := inner.(*ast.FuncCallExpr)
	if !ok || ic.FnName.L != front.CastFunc || len(ic.Args) != 2 {
		return
	}
	typ, _ := ConstString(ic.Args[1])
	typ = strings.TrimPrefix(strings.ToLower(strings.TrimSpace(typ)), "pg_catalog.")
	if !regNameTypes[typ] {
		return
	}
	if _, ok := ConstTextOperand(ic.Args[0]); ok {
		return
	}
	shown := regDisplayOf(v.e, ic, typ)
	// The display's ELSE is ic::text again: it must not be rewritten in
	// turn when the walk reaches it (x::text::regtype::text would never
	// end).
	if v.displayed == nil {
		v.displayed = map[*ast.FuncCallExpr]bool{}
	}
	if els, ok := shown.(*ast.CaseExpr).ElseClause.(*ast.FuncCallExpr); ok {
		v.displayed[els] = true
	}
	c.Args[0] = shown
}

// regTextName keeps the column name of a selected oid::regtype::text,
// which PostgreSQL takes from the innermost column, before regText
// rewrites the cast.
func regTextName(f *ast.SelectField) {
	if f.Expr == nil || f.AsName.L != "" || f.WildCard != nil {
		return
	}
	x := f.Expr
	depth := 0
	for {
		for p, ok := x.(*ast.ParenthesesExpr); ok; p, ok = x.(*ast.ParenthesesExpr) {
			x = p.Expr
		}
		c, ok := x.(*ast.FuncCallExpr)
		if !ok || c.FnName.L != front.CastFunc || len(c.Args) != 2 {
			break
		}
		typ, _ := ConstString(c.Args[1])
		if depth == 1 && !regNameTypes[strings.TrimPrefix(strings.ToLower(strings.TrimSpace(typ)), "pg_catalog.")] {
			return
		}
		if depth == 0 && !TextOperand(c) {
			return
		}
		x = c.Args[0]
		depth++
	}
	if col, ok := x.(*ast.ColumnNameExpr); ok && depth >= 2 {
		f.AsName = col.Name.Name
	}
}

// showRegName makes a selected column of an OID alias type that is no
// constant (c.oid::regclass) show the name, as PostgreSQL's output
// function prints it: it becomes c.oid::regclass::text, which regText
// then rewrites. The column keeps PostgreSQL's name (the operand's
// column, else the type). Only the outermost query's columns change, so
// that a derived table's regclass column still compares as an OID.
func showRegName(f *ast.SelectField) {
	if f.Expr == nil || f.WildCard != nil {
		return
	}
	c, ok := f.Expr.(*ast.FuncCallExpr)
	if !ok || c.FnName.L != front.CastFunc || len(c.Args) != 2 {
		return
	}
	typ, _ := ConstString(c.Args[1])
	typ = strings.TrimPrefix(strings.ToLower(strings.TrimSpace(typ)), "pg_catalog.")
	if !regNameTypes[typ] {
		return
	}
	if _, ok := ConstTextOperand(c.Args[0]); ok {
		return // a constant's name is shown where the field is named
	}
	if f.AsName.L == "" {
		f.AsName = ast.NewCIStr(typ)
		operand := c.Args[0]
		for p, ok := operand.(*ast.ParenthesesExpr); ok; p, ok = operand.(*ast.ParenthesesExpr) {
			operand = p.Expr
		}
		if col, ok := operand.(*ast.ColumnNameExpr); ok {
			f.AsName = col.Name.Name
		}
	}
	f.Expr = &ast.FuncCallExpr{FnName: ast.NewCIStr(front.CastFunc), Args: []ast.ExprNode{c, value("text")}}
}
