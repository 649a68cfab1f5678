package binder

import (
	"streamdb/expr"
	"streamdb/plan"
	"streamdb/sqlerr"
)

// checkDeterministic refuses a view whose expressions call a function
// that answers differently over time (random(), now(), ...): the view is
// maintained incrementally, so its rows would mix answers from the times
// each change arrived, which no query recomputed later agrees with.
func checkDeterministic(root plan.Node) error {
	name := ""
	MapPlan(root, func(e expr.Expr) (expr.Expr, error) {
		if e != nil && name == "" {
			name = expr.VolatileCall(e)
		}
		return e, nil
	}, nil)
	if name == "" {
		return nil
	}
	return sqlerr.New(sqlerr.FeatureNotSupported, "%s() is not supported in a materialized view: its result changes over time", name).
		WithHint("Compute it when you query the view, or store the value in the stream's events.")
}
