package binder

import (
	"streamdb/expr"
	"streamdb/types"
)

// unnest(array), a set-returning function (bind_srf.go), gives one row
// per element, NULLs kept. The column's type is the array's element type;
// an array carried as text (the catalog's arrays, an untyped literal)
// gives text.

// bindUnnest types the column of unnest(arg).
func bindUnnest(arg expr.Expr) (SRFCall, error) {
	elem := types.Text
	if t := arg.Type(); t.IsArray() {
		elem = t.Elem()
	}
	arg, err := expr.Cast(arg, types.Text)
	if err != nil {
		return SRFCall{}, err
	}
	return SRFCall{Name: "unnest", Args: []expr.Expr{arg}, T: elem, rows: func(v []types.Datum) ([]types.Datum, error) {
		return unnestRows(v[0], elem)
	}}, nil
}

// unnestRows gives the elements of array v, read as values of t.
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
