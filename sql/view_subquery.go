package sql

import (
	"fmt"

	"streamdb/expr"
	"streamdb/plan"
	"streamdb/types"
)

// Uncorrelated scalar subqueries in a materialized view whose subquery is
// one aggregate row (an aggregate without GROUP BY, HAVING or LIMIT,
// which always answers exactly one row, even over no input) are joined to
// the rows that use them:
//
//	SELECT a FROM t WHERE v > (SELECT avg(v) FROM t)
//	  ->  Project a (Filter v > s (Join t, (SELECT avg(v) FROM t) AS s on 1 = 1))
//
// so the view stays incremental: when the aggregate changes, the join
// retracts the rows paired with its old value and pairs them with the
// new one. Other subqueries in a view's expressions (correlated ones,
// EXISTS, IN, a subquery that may give several rows) are still refused
// by checkStreamable.

// decorrelateViewSubqueries rewrites the eligible subqueries of root; a
// plan without subqueries is returned as it is.
func decorrelateViewSubqueries(root plan.Node) (plan.Node, error) {
	if len(subqueryPlans(root)) == 0 {
		return root, nil
	}
	return mapPlanNodes(root, nil, func(n plan.Node) (plan.Node, bool, error) {
		switch n := n.(type) {
		case *plan.Filter:
			in, err := decorrelateViewSubqueries(n.Input)
			if err != nil {
				return nil, true, err
			}
			width := len(in.Schema())
			conds, joined, err := liftScalarSubqueries([]expr.Expr{n.Cond}, in)
			if err != nil || joined == in {
				return &plan.Filter{Input: in, Cond: n.Cond}, true, err
			}
			f := &plan.Filter{Input: joined, Cond: conds[0]}
			// Drop the subqueries' columns again.
			keep := make([]expr.Expr, width)
			for i, c := range in.Schema() {
				keep[i] = &expr.ColRef{Idx: i, Name: c.Name, T: c.Type}
			}
			return &plan.Project{Input: f, Exprs: keep, Cols: in.Schema()}, true, nil
		case *plan.Project:
			in, err := decorrelateViewSubqueries(n.Input)
			if err != nil {
				return nil, true, err
			}
			exprs, joined, err := liftScalarSubqueries(n.Exprs, in)
			if err != nil {
				return nil, true, err
			}
			return &plan.Project{Input: joined, Exprs: exprs, Cols: n.Cols}, true, nil
		}
		return n, false, nil
	})
}

// liftScalarSubqueries joins input with each eligible subquery of exprs
// and returns exprs reading the joined column instead, and the new input
// (input itself when there was none).
func liftScalarSubqueries(exprs []expr.Expr, input plan.Node) ([]expr.Expr, plan.Node, error) {
	correlated := map[*expr.Subquery]bool{}
	for _, e := range exprs {
		expr.Visit(e, func(x expr.Expr) {
			if s, outer, ok := expr.SubqueryOf(x); ok && len(outer) > 0 {
				correlated[s] = true
			} else if f, ok := x.(*expr.Func); ok && f.Name == expr.CorrelatedFunc && len(f.Args) > 0 {
				if s, ok := f.Args[0].(*expr.Subquery); ok {
					correlated[s] = true
				}
			}
		})
	}
	out := make([]expr.Expr, len(exprs))
	var firstErr error
	for i, e := range exprs {
		if e == nil || !hasSubquery(e) {
			out[i] = e
			continue
		}
		out[i] = expr.Walk(expr.Clone(e), func(x expr.Expr) expr.Expr {
			s, ok := x.(*expr.Subquery)
			if !ok || correlated[s] || s.Kind != expr.SubqueryScalar || !oneAggregateRow(s.Plan.(plan.Node)) {
				return x
			}
			sub, err := decorrelateViewSubqueries(s.Plan.(plan.Node))
			if err != nil {
				if firstErr == nil {
					firstErr = err
				}
				return x
			}
			left := input.Schema()
			col := types.Column{Name: fmt.Sprintf("(subquery %d)", len(left)), Type: s.T}
			one := &expr.Const{D: types.NewInt(1), T: types.Int4}
			input = &plan.Join{Kind: plan.InnerJoin, Left: input, Right: sub,
				LeftKeys: []expr.Expr{one}, RightKeys: []expr.Expr{one},
				Cols: append(append([]types.Column{}, left...), renamed(sub.Schema(), col.Name)...)}
			return &expr.ColRef{Idx: len(left), Name: col.Name, T: s.T}
		})
	}
	return out, input, firstErr
}

// renamed is cols with the first column named name.
func renamed(cols []types.Column, name string) []types.Column {
	out := append([]types.Column{}, cols...)
	if len(out) > 0 {
		out[0].Name = name
	}
	return out
}

// oneAggregateRow reports whether p always gives exactly one row: an
// aggregate without GROUP BY, under projections only.
func oneAggregateRow(p plan.Node) bool {
	for {
		switch n := p.(type) {
		case *plan.Project:
			p = n.Input
		case *plan.Aggregate:
			return len(n.GroupBy) == 0
		default:
			return false
		}
	}
}
