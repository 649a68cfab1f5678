package binder

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"streamdb/expr"
	"streamdb/sqlerr"
	"streamdb/types"
)

// pg_options_to_table, which pg_dump calls in FROM.

// textArrayType is text[].
var textArrayType = types.ArrayOf(types.Text)

// bindOptionsToTable binds pg_options_to_table(options) in FROM: the
// rows (option_name, option_value) of a text[] of "name=value" items,
// none for NULL. pg_dump reads the options of foreign-data wrappers,
// servers and columns through it; streamdb has none of those options,
// but the function works on any array.
func bindOptionsToTable(b *binder, fc *ast.FuncCallExpr) ([]SRFCall, error) {
	if fc.FnName.L != "pg_options_to_table" {
		return nil, nil
	}
	if len(fc.Args) != 1 {
		return nil, sqlerr.New(sqlerr.UndefinedFunction, "function pg_options_to_table takes one text[] argument")
	}
	arg, err := b.bindExpr(fc.Args[0], &scope{})
	if err != nil {
		return nil, err
	}
	if arg, err = expr.Cast(arg, textArrayType); err != nil {
		return nil, err
	}
	part := func(value bool) func([]types.Datum) ([]types.Datum, error) {
		return func(v []types.Datum) ([]types.Datum, error) {
			if v[0].IsNull() {
				return nil, nil
			}
			items, err := types.SplitArray(v[0].S)
			if err != nil {
				return nil, err
			}
			out := make([]types.Datum, len(items))
			for i, it := range items {
				if it.IsNull() {
					out[i] = types.Null
					continue
				}
				name, val, ok := strings.Cut(it.S, "=")
				switch {
				case !value:
					out[i] = types.NewString(name)
				case ok:
					out[i] = types.NewString(val)
				default:
					out[i] = types.Null
				}
			}
			return out, nil
		}
	}
	args := []expr.Expr{arg}
	return []SRFCall{
		{Name: "option_name", Args: args, T: types.Text, rows: part(false)},
		{Name: "option_value", Args: args, T: types.Text, rows: part(true)},
	}, nil
}
