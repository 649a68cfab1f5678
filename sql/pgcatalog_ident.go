package sql

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"streamdb/sql/front"
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
	s, ok := constString(args[0])
	if !ok {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "parse_ident needs a string literal")
	}
	names, err := parseIdent(s)
	if err != nil {
		return nil, err
	}
	call := &ast.FuncCallExpr{FnName: ast.NewCIStr(front.ArrayFunc)}
	for _, n := range names {
		call.Args = append(call.Args, value(n))
	}
	return call, nil
}

// parseIdent splits a qualified identifier into its names.
func parseIdent(s string) ([]string, error) {
	bad := func() ([]string, error) {
		return nil, sqlerr.New(sqlerr.InvalidParameterValue, "string is not a valid identifier: \"%s\"", s)
	}
	var out []string
	i := 0
	for {
		for i < len(s) && s[i] == ' ' {
			i++
		}
		var name strings.Builder
		switch {
		case i < len(s) && s[i] == '"':
			i++
			for {
				j := strings.IndexByte(s[i:], '"')
				if j < 0 {
					return bad()
				}
				name.WriteString(s[i : i+j])
				i += j + 1
				if i < len(s) && s[i] == '"' {
					name.WriteByte('"')
					i++
					continue
				}
				break
			}
			if name.Len() == 0 {
				return bad()
			}
		default:
			start := i
			for i < len(s) && s[i] != '.' && s[i] != ' ' {
				i++
			}
			if i == start {
				return bad()
			}
			name.WriteString(strings.ToLower(s[start:i]))
		}
		out = append(out, name.String())
		for i < len(s) && s[i] == ' ' {
			i++
		}
		if i == len(s) {
			return out, nil
		}
		if s[i] != '.' {
			return bad()
		}
		i++
	}
}
