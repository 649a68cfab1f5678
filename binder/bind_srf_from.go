package binder

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/test_driver"

	"streamdb/expr"
	"streamdb/front"
	"streamdb/plan"
	"streamdb/sqlerr"
	"streamdb/types"
)

// Set-returning functions in FROM. The front layer turns f(...) [WITH
// ORDINALITY] [AS t(c, ...)] and ROWS FROM (f(...), ...) into the derived
// table (SELECT streamdb_rows_from(flags, 't', 'c', ..., f(...), ...)) AS t
// (front/rewrite_series.go); rowsFromCall finds that call and
// bindRowsFrom makes it one SRFNode.

// rowsFromCall returns the RowsFromFunc call of a SELECT that is one.
func rowsFromCall(sel *ast.SelectStmt) (*ast.FuncCallExpr, bool) {
	if sel.From != nil || sel.Where != nil || sel.GroupBy != nil || sel.Having != nil || sel.OrderBy != nil ||
		sel.Limit != nil || sel.Distinct || sel.Fields == nil || len(sel.Fields.Fields) != 1 {
		return nil, false
	}
	call, ok := sel.Fields.Fields[0].Expr.(*ast.FuncCallExpr)
	return call, ok && call.FnName.L == front.RowsFromFunc
}

// bindRowsFrom binds the calls and names the columns as PostgreSQL does:
// when the functions give one column, it takes the table alias (else the
// function's name); otherwise each column is named after its function,
// and the ordinality column "ordinality"; column aliases then rename them
// in order. unnest(a, b, ...) outside ROWS FROM is ROWS FROM (unnest(a),
// unnest(b), ...).
func (sb *selectBinder) bindRowsFrom(call *ast.FuncCallExpr) (plan.Node, error) {
	b := &binder{stmt: sb.params, corr: sb.corr}
	var flags int64
	var alias string
	var aliases []ast.CIStr
	var calls []SRFCall
	for i, a := range call.Args {
		if v, ok := a.(*test_driver.ValueExpr); ok {
			switch {
			case i == 0:
				flags = v.GetInt64()
			case i == 1:
				alias = v.GetString()
			default:
				aliases = append(aliases, ast.NewCIStr(v.GetString()))
			}
			continue
		}
		fc, ok := a.(*ast.FuncCallExpr)
		if !ok {
			return nil, sqlerr.New(sqlerr.SyntaxError, "ROWS FROM takes function calls")
		}
		if err := noNestedSRF(fc); err != nil {
			return nil, err
		}
		each, err := bindJSONEach(b, fc)
		if each == nil && err == nil {
			each, err = bindOptionsToTable(b, fc)
		}
		if each != nil || err != nil {
			if err != nil {
				return nil, err
			}
			calls = append(calls, each...)
			if alias == "" {
				alias = fc.FnName.L
			}
			continue
		}
		if fc.FnName.L == "unnest" && len(fc.Args) > 1 && flags&2 == 0 {
			for _, arg := range fc.Args {
				one := &ast.FuncCallExpr{FnName: fc.FnName, Args: []ast.ExprNode{arg}}
				c, err := bindSRFCall(b, one, &scope{})
				if err != nil {
					return nil, err
				}
				calls = append(calls, c)
			}
			continue
		}
		c, err := bindSRFCall(b, fc, &scope{})
		if err != nil {
			return nil, err
		}
		calls = append(calls, c)
	}
	node := &SRFNode{Calls: calls, Ordinality: flags&1 != 0}
	for _, c := range calls {
		name := c.Name
		named := strings.Contains(name, "array_elements")
		if named {
			// The name of the function's OUT parameter, which a table
			// alias does not change.
			name = "value"
		}
		if len(calls) == 1 && alias != "" && !named {
			name = alias
		}
		node.Cols = append(node.Cols, types.Column{Name: name, Type: c.T})
	}
	if node.Ordinality {
		node.Cols = append(node.Cols, types.Column{Name: "ordinality", Type: types.Int8})
	}
	if alias == "" {
		alias = calls[0].Name
	}
	cols, err := renameColumns(node.Cols, aliases, alias)
	if err != nil {
		return nil, err
	}
	node.Cols = cols
	return node, nil
}

// noNestedSRF refuses a set-returning function in the arguments of call.
func noNestedSRF(call *ast.FuncCallExpr) error {
	for _, a := range call.Args {
		if containsSRF(a) {
			return sqlerr.New(sqlerr.FeatureNotSupported, "set-returning functions must appear at top level of FROM").
				WithHint("Write the inner set-returning function as its own FROM item and refer to its column.")
		}
	}
	return nil
}

// bindJSONEach binds jsonb_each(x) and its kin in FROM as two calls run
// side by side, whose columns are the function's key and value; nil for
// other calls.
func bindJSONEach(b *binder, fc *ast.FuncCallExpr) ([]SRFCall, error) {
	switch fc.FnName.L {
	case "jsonb_each", "jsonb_each_text", "json_each", "json_each_text":
	default:
		return nil, nil
	}
	args := make([]expr.Expr, len(fc.Args))
	for i, a := range fc.Args {
		e, err := b.bindExpr(a, &scope{})
		if err != nil {
			return nil, err
		}
		args[i] = e
	}
	keys, vals, bound, vt, _, err := expr.JSONEachRows(fc.FnName.L, args)
	if err != nil {
		return nil, err
	}
	return []SRFCall{
		{Name: "key", Func: fc.FnName.L, Args: bound, T: types.Text, rows: keys},
		{Name: "value", Func: fc.FnName.L, Args: bound, T: vt, rows: vals},
	}, nil
}
