package binder

import (
	"streamdb/expr"
	"streamdb/plan"
)

// HasSubquery reports whether e holds a subquery.
func HasSubquery(e expr.Expr) bool {
	found := false
	expr.Visit(e, func(x expr.Expr) {
		if _, ok := x.(*expr.Subquery); ok {
			found = true
		}
	})
	return found
}

// SubqueryPlans returns the plans of the subqueries in root's expressions
// (not those nested in them).
func SubqueryPlans(root plan.Node) []plan.Node {
	var out []plan.Node
	MapPlan(root, func(e expr.Expr) (expr.Expr, error) {
		if e != nil {
			expr.Visit(e, func(x expr.Expr) {
				if s, ok := x.(*expr.Subquery); ok {
					out = append(out, s.Plan.(plan.Node))
				}
			})
		}
		return e, nil
	}, nil)
	return out
}
