package expr

import (
	"streamdb/sqlerr"
	"streamdb/types"
)

// ObjectAggKeyFunc wraps the key of json_object_agg and jsonb_object_agg
// (their argument is the [key, value] pair the binder builds): it passes
// the key through and fails on NULL, as PostgreSQL's aggregates do for
// each row they read. A row a FILTER leaves out never reaches it.
const ObjectAggKeyFunc = "streamdb_object_agg_key"

func objectAggKey(args []Expr) (Expr, error) {
	if len(args) != 1 {
		return nil, wrongArgs(ObjectAggKeyFunc, args)
	}
	return &Func{Name: ObjectAggKeyFunc, Args: args, T: args[0].Type(), Fn: func(a []types.Datum) (types.Datum, error) {
		if a[0].IsNull() {
			return types.Null, sqlerr.New(sqlerr.InvalidParameterValue, "field name must not be null")
		}
		return a[0], nil
	}}, nil
}
