package sql

import (
	"streamdb/expr"
	"streamdb/plan"
	"streamdb/types"
)

// hasSubquery reports whether e holds a subquery.
func hasSubquery(e expr.Expr) bool {
	found := false
	expr.Visit(e, func(x expr.Expr) {
		if _, ok := x.(*expr.Subquery); ok {
			found = true
		}
	})
	return found
}

// subqueryPlans returns the plans of the subqueries in root's expressions
// (not those nested in them).
func subqueryPlans(root plan.Node) []plan.Node {
	var out []plan.Node
	mapPlan(root, func(e expr.Expr) (expr.Expr, error) {
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

// withSubqueries is root and the plans of all its subqueries, nested ones
// too: what a query reads.
func withSubqueries(root plan.Node) []plan.Node {
	all := []plan.Node{root}
	for i := 0; i < len(all); i++ {
		all = append(all, subqueryPlans(all[i])...)
	}
	return all
}

// resolveSubqueries returns a copy of n in which each subquery is replaced
// by its result: run executes a subquery's plan (with the query's
// parameters and reader) and returns its rows. Each subquery runs once.
func resolveSubqueries(n plan.Node, run func(plan.Node) ([]types.Row, error)) (plan.Node, error) {
	return mapPlan(n, func(e expr.Expr) (expr.Expr, error) {
		if e == nil || !hasSubquery(e) {
			return e, nil
		}
		var err error
		out := expr.Walk(expr.Clone(e), func(x expr.Expr) expr.Expr {
			if err != nil {
				return x
			}
			var res expr.Expr
			switch x := x.(type) {
			case *expr.Subquery:
				var rows []types.Row
				if rows, err = run(x.Plan.(plan.Node)); err != nil {
					return x
				}
				if x.Kind == expr.SubqueryExists {
					return x.ResolveExists(rows)
				}
				res, err = x.ResolveScalar(rows)
			case *expr.Func:
				sq, ok := inSubquery(x)
				if !ok {
					return x
				}
				var rows []types.Row
				if rows, err = run(sq.Plan.(plan.Node)); err != nil {
					return x
				}
				res, err = expr.ResolveIn(x.Args[0], sq.T, rows, x.Name == expr.NotInSubquery)
			default:
				return x
			}
			if err != nil {
				return x
			}
			return res
		})
		return out, err
	}, nil)
}

// inSubquery returns the subquery of an x [NOT] IN (subquery) call.
func inSubquery(f *expr.Func) (*expr.Subquery, bool) {
	if (f.Name != expr.InSubquery && f.Name != expr.NotInSubquery) || len(f.Args) != 2 {
		return nil, false
	}
	sq, ok := f.Args[1].(*expr.Subquery)
	return sq, ok
}
