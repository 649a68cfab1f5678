package rewrite

import (
	"github.com/pingcap/tidb/pkg/parser/ast"

	"streamdb/front"
	"streamdb/pgcatalog"
	"streamdb/sqlerr"
)

// parseIdentCall substitutes parse_ident('a."B".c') by the text array of
// its names, {a,B,c}: unquoted names fold to lower case, quoted ones keep
// theirs ("" is a quote inside). The argument must be a string literal
// (Grafana's column picker passes the table name so).
func parseIdentCall(args []ast.ExprNode) (ast.ExprNode, error) {
	if len(args) < 1 || len(args) > 2 {
		return nil, sqlerr.New(sqlerr.UndefinedFunction, "function parse_ident takes a qualified identifier and, optionally, strict")
	}
	s, ok := ConstString(args[0])
	if !ok {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "parse_ident needs a string literal")
	}
	names, err := pgcatalog.ParseIdent(s)
	if err != nil {
		return nil, err
	}
	call := &ast.FuncCallExpr{FnName: ast.NewCIStr(front.ArrayFunc)}
	for _, n := range names {
		call.Args = append(call.Args, value(n))
	}
	return call, nil
}
