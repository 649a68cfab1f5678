package binder

import (
	"streamdb/expr"
	"streamdb/sqlerr"
	"streamdb/types"
)

// generate_subscripts(array, dim [, reverse]), a set-returning function
// (bind_srf.go): the subscripts of the array's dimension dim, from its
// lower bound to its upper one (the other way when reverse is true); no
// rows for a NULL or empty array or a dimension it does not have.

// bindSubscripts binds the call as the bounds of the dimension and the
// direction, which the rows are made from.
func bindSubscripts(args []expr.Expr) (SRFCall, error) {
	if len(args) < 2 || len(args) > 3 {
		return SRFCall{}, noSuchFunction("generate_subscripts", args, "generate_subscripts(array, dimension [, reverse]).")
	}
	if t := args[0].Type(); !t.IsArray() && t != types.Unknown {
		return SRFCall{}, sqlerr.New(sqlerr.UndefinedFunction, "function generate_subscripts(%s, %s) does not exist", t, args[1].Type()).
			WithHint("The first argument must be an array.")
	}
	lower, err := expr.Call("array_lower", args[:2])
	if err != nil {
		return SRFCall{}, err
	}
	upper, err := expr.Call("array_upper", args[:2])
	if err != nil {
		return SRFCall{}, err
	}
	var reverse expr.Expr = &expr.Const{D: types.NewBool(false), T: types.Bool}
	if len(args) == 3 {
		if reverse, err = expr.Cast(args[2], types.Bool); err != nil || reverse.Type() != types.Bool {
			return SRFCall{}, sqlerr.New(sqlerr.UndefinedFunction, "function generate_subscripts(%s, %s, %s) does not exist", args[0].Type(), args[1].Type(), args[2].Type()).
				WithHint("The third argument is a boolean: true lists the subscripts from the upper bound down.")
		}
	}
	return SRFCall{Name: "generate_subscripts", Args: []expr.Expr{lower, upper, reverse}, T: types.Int4,
		rows: func(v []types.Datum) ([]types.Datum, error) {
			if v[0].IsNull() || v[1].IsNull() {
				return nil, nil
			}
			lo, hi := v[0].I, v[1].I
			if hi-lo >= maxSeriesRows {
				return nil, sqlerr.New(sqlerr.ProgramLimitExceeded, "generate_subscripts would give more than %d rows", maxSeriesRows)
			}
			out := make([]types.Datum, 0, max(hi-lo+1, 0))
			for i := lo; i <= hi; i++ {
				out = append(out, types.NewInt(i))
			}
			if !v[2].IsNull() && v[2].Bool() {
				for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
					out[i], out[j] = out[j], out[i]
				}
			}
			return out, nil
		}}, nil
}
