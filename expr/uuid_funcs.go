package expr

import "streamdb/types"

// uuidFunc builds the uuid functions: gen_random_uuid(), a new version 4
// uuid at each call (volatile: refused in materialized views, see
// volatileFuncs). ok is false for other names.
func uuidFunc(name string, args []Expr) (Expr, bool, error) {
	if name != "gen_random_uuid" {
		return nil, false, nil
	}
	if len(args) != 0 {
		return nil, true, wrongArgs(name, args)
	}
	return &Func{Name: name, T: types.UUID, Fn: func([]types.Datum) (types.Datum, error) {
		return types.RandomUUID(), nil
	}}, true, nil
}
