package sql

import (
	"github.com/pingcap/tidb/pkg/parser/ast"

	"streamdb/expr"
	"streamdb/sql/front"
	"streamdb/types"
)

// unnest(array), a set-returning function (bind_srf.go), gives one row
// per element, NULLs kept. Arrays travel as their text form
// (expr/array_text.go), so the column's type is the elements' common type
// when the argument is ARRAY[...] (integers, numerics, booleans, times;
// text when they differ), and text for any other array expression.

// bindUnnest types the column of unnest(node), whose argument bound is arg.
func bindUnnest(b *binder, node ast.ExprNode, arg expr.Expr) (srfCall, error) {
	elem := types.Text
	if lit, ok := node.(*ast.FuncCallExpr); ok && lit.FnName.L == front.ArrayFunc {
		var ts []types.Type
		for _, a := range lit.Args {
			e, err := b.bindExpr(a, &scope{})
			if err != nil {
				return srfCall{}, err
			}
			ts = append(ts, e.Type())
		}
		elem = commonElementType(ts)
	}
	arg, err := expr.Cast(arg, types.Text)
	if err != nil {
		return srfCall{}, err
	}
	return srfCall{Name: "unnest", Args: []expr.Expr{arg}, T: elem, rows: func(v []types.Datum) ([]types.Datum, error) {
		return unnestRows(v[0], elem)
	}}, nil
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

// unnestRows gives the elements of array v, cast to t.
func unnestRows(v types.Datum, t types.Type) ([]types.Datum, error) {
	if v.IsNull() {
		return nil, nil
	}
	elems, err := expr.ArrayElements(v.S)
	if err != nil {
		return nil, err
	}
	for i, e := range elems {
		if t != types.Text && !e.IsNull() {
			c, err := expr.Cast(&expr.Const{D: e, T: types.Text}, t)
			if err != nil {
				return nil, err
			}
			if elems[i], err = c.Eval(nil); err != nil {
				return nil, err
			}
		}
	}
	return elems, nil
}
