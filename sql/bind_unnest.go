package sql

import (
	"github.com/pingcap/tidb/pkg/parser/ast"

	"streamdb/expr"
	"streamdb/plan"
	"streamdb/sql/front"
	"streamdb/sqlerr"
	"streamdb/types"
)

// unnest(array) in FROM of ad-hoc queries (the front layer turns it into
// SELECT streamdb_unnest(...) AS col, as generate_series) and as the only
// item of a SELECT without FROM gives one row per element, NULLs kept.
// Arrays travel as their text form (expr/array_text.go), so the column's
// type is the elements' common type when the argument is ARRAY[...]
// (integers, numerics, booleans, times; text when they differ), and text
// for any other array expression.

// unnestCall returns the unnest call of a SELECT that is one, and the name
// of its column.
func unnestCall(sel *ast.SelectStmt) (*ast.FuncCallExpr, string, bool) {
	return soleFunctionCall(sel, front.UnnestFunc, "unnest")
}

// bindUnnest binds the array argument and types the column.
func (sb *selectBinder) bindUnnest(call *ast.FuncCallExpr, name string) (plan.Node, error) {
	b := &binder{stmt: sb.params, corr: sb.corr}
	if len(call.Args) != 1 {
		return nil, sqlerr.New(sqlerr.UndefinedFunction, "function unnest with %d arguments does not exist", len(call.Args)).
			WithHint("Write unnest(array): one array, one column.")
	}
	elem := types.Text
	if lit, ok := call.Args[0].(*ast.FuncCallExpr); ok && lit.FnName.L == front.ArrayFunc {
		var ts []types.Type
		for _, a := range lit.Args {
			e, err := b.bindExpr(a, &scope{})
			if err != nil {
				return nil, err
			}
			ts = append(ts, e.Type())
		}
		elem = commonElementType(ts)
	}
	arg, err := b.bindExpr(call.Args[0], &scope{})
	if err != nil {
		return nil, err
	}
	if arg, err = expr.Cast(arg, types.Text); err != nil {
		return nil, err
	}
	return &seriesNode{Args: []expr.Expr{arg}, Cols: []types.Column{{Name: name, Type: elem}}, Unnest: true}, nil
}

// commonElementType is the type of ARRAY[...] elements of types ts: their
// shared type, the widest integer, numeric over mixed numbers; text
// otherwise (and for untyped literals alone).
func commonElementType(ts []types.Type) types.Type {
	var out types.Type = types.Unknown
	for _, t := range ts {
		switch {
		case t == types.Unknown:
		case out == types.Unknown || out == t:
			out = t
		case out.IsInteger() && t.IsInteger():
			if t == types.Int8 || out == types.Int8 {
				out = types.Int8
			} else if t == types.Int4 || out == types.Int4 {
				out = types.Int4
			}
		case out.IsNumeric() && t.IsNumeric():
			out = types.Numeric
		default:
			return types.Text
		}
	}
	if out == types.Unknown {
		return types.Text
	}
	return out
}

// runUnnest gives one row per element of the array, cast to the column's
// type.
func runUnnest(s *seriesNode) ([]types.Row, error) {
	v, err := s.Args[0].Eval(nil)
	if err != nil || v.IsNull() {
		return nil, err
	}
	elems, err := expr.ArrayElements(v.S)
	if err != nil {
		return nil, err
	}
	t := s.Cols[0].Type
	rows := make([]types.Row, len(elems))
	for i, e := range elems {
		if t != types.Text && !e.IsNull() {
			c, err := expr.Cast(&expr.Const{D: e, T: types.Text}, t)
			if err != nil {
				return nil, err
			}
			if e, err = c.Eval(nil); err != nil {
				return nil, err
			}
		}
		rows[i] = types.Row{e}
	}
	return rows, nil
}
