package sql

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"streamdb/pgcatalog"
	"streamdb/pgcatalog/rewrite"
	"streamdb/types"
)

// The PostgreSQL view of streamdb's catalog is package pgcatalog; these
// are the names sql uses of it.

const (
	// firstUserOID is PostgreSQL's FirstNormalObjectId: a relation's
	// OID is firstUserOID plus its catalog ID.
	firstUserOID = pgcatalog.FirstUserOID
)

// quoteIdent quotes a name the way PostgreSQL's quote_ident does.
func quoteIdent(name string) string { return pgcatalog.QuoteIdent(name) }

// quoteLiteral quotes s as a standard SQL string literal.
func quoteLiteral(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// quoteIdents quotes names and joins them with ", ".
func quoteIdents(names []string) string { return pgcatalog.QuoteIdents(names) }

// typname is pg_type.typname of a type.
func typname(t types.Type) string { return pgcatalog.Typname(t) }

// The syntax tree's constants as package rewrite reads and writes them.

func value(x any) ast.ExprNode                       { return rewrite.Value(x) }
func eq(l, r ast.ExprNode) ast.ExprNode              { return rewrite.Eq(l, r) }
func boolExpr(b bool) ast.ExprNode                   { return rewrite.BoolExpr(b) }
func constString(x ast.ExprNode) (string, bool)      { return rewrite.ConstString(x) }
func constTextOperand(x ast.ExprNode) (string, bool) { return rewrite.ConstTextOperand(x) }
func constBool(x ast.ExprNode) (bool, bool)          { return rewrite.ConstBool(x) }
func isNullConst(x ast.ExprNode) bool                { return rewrite.IsNullConst(x) }
func constInt(x ast.ExprNode) (int64, bool)          { return rewrite.ConstInt(x) }
func str(s string) types.Datum                       { return types.NewString(s) }

// oidTypes are the OID alias types: a cast to one is a cast to bigint.
var oidTypes = rewrite.OIDTypes

// resolveOID reads a name as PostgreSQL's regclass, regtype, regproc or
// regnamespace input does (pgcatalog.ResolveOID).
func (e *Engine) resolveOID(typ, name string) (int64, error) {
	return pgcatalog.ResolveOID(catalogEngine{e}, typ, name)
}

// regCastOfText is x::typ for a text operand x that is not a constant
// (rewrite.RegCastOfText). orNull: an unknown name gives NULL.
func (e *Engine) regCastOfText(x ast.ExprNode, typ string, orNull bool) ast.ExprNode {
	return rewrite.RegCastOfText(catalogEngine{e}, x, typ, orNull)
}

// unquoteQualified folds a possibly quoted, possibly qualified name as
// PostgreSQL reads identifiers (pgcatalog.UnquoteQualified).
func unquoteQualified(name string) string { return pgcatalog.UnquoteQualified(name) }
