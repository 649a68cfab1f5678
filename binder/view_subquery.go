package binder

import (
	"streamdb/expr"
	"streamdb/plan"
	"streamdb/types"
)

// Subqueries in the expressions of a materialized view are decorrelated
// when the view is bound: each becomes a join of the rows that use it
// with an aggregate over the subquery's rows, keyed by the correlation
// (view_correlation.go), so the view stays incremental and exact under
// retraction on either side. The aggregate keeps the per-key row counts:
// a key's group appears when its count goes from 0 to 1 and is retracted
// when it goes back to 0, and the join pairs or unpairs the outer rows
// with it. An uncorrelated subquery is grouped by the constant 1 instead:
// one group while it has rows, none when it is empty. With K the keys:
//
//   - EXISTS as a condition of WHERE is a semi join: an inner join with
//     the groups of K. NOT EXISTS there is an anti join: a left join with
//     them, keeping the rows without a partner. Elsewhere, EXISTS is a
//     left join and reads "key IS NOT NULL".
//   - x IN (SELECT y ...) and = ANY as a condition of WHERE is a semi join
//     with the groups of K, y on K, x. Elsewhere, and x NOT IN (<> ALL)
//     anywhere, it is a left join with those matches and another with
//     max(y IS NULL) per K, which give SQL's NULL rules: true if some
//     y = x; else false if the subquery is empty; else NULL if x is NULL
//     or some y is NULL; else false. The other comparisons with ANY or
//     ALL read min(y) and max(y) per K too (view_quantified.go).
//   - A scalar subquery that is an aggregate without GROUP BY: the
//     aggregate grouped by K, left joined on them; an outer row without a
//     group reads what the aggregate gives over no rows (0 for count,
//     NULL for the others). An uncorrelated one is joined on a constant
//     key (it is one row).
//
// A correlation by other conditions than inner = outer, or values that
// read the outer row, is joined with the distinct outer values first
// (view_domain.go), whose columns are then K; subqueries in JOIN ... ON
// move to a filter first (view_join_on.go). What cannot be run this way
// (a scalar subquery that may give several rows, a correlation in a
// derived table or an outer join's ON inside the subquery, subqueries
// in aggregate arguments) is refused with 0A000.

// decorrelateViewSubqueries rewrites the subqueries of root; a plan
// without subqueries is returned as it is.
func decorrelateViewSubqueries(root plan.Node) (plan.Node, error) {
	if len(SubqueryPlans(root)) == 0 {
		return root, nil
	}
	if err := refuseRowIn(root); err != nil {
		return nil, err
	}
	return MapPlanNodes(root, nil, func(n plan.Node) (plan.Node, bool, error) {
		switch n := n.(type) {
		case *plan.Filter:
			in, err := decorrelateViewSubqueries(n.Input)
			if err != nil {
				return nil, true, err
			}
			if !HasSubquery(n.Cond) {
				return &plan.Filter{Input: in, Cond: n.Cond}, true, nil
			}
			width := len(in.Schema())
			// The conditions without subqueries filter the rows before
			// the joins, which then hold fewer.
			plain, withSub := splitBySubquery(n.Cond)
			l := &lifter{input: in, base: in}
			if len(plain) > 0 {
				cond, err := conjoin(plain)
				if err != nil {
					return nil, true, err
				}
				l.input = &plan.Filter{Input: in, Cond: cond}
				l.base = l.input
			}
			var rest []expr.Expr
			for _, c := range withSub {
				done, err := l.semiJoin(c)
				if err != nil {
					return nil, true, err
				}
				if !done {
					rest = append(rest, c)
				}
			}
			conds, err := l.lift(rest)
			if err != nil {
				return nil, true, err
			}
			out := l.input
			if len(conds) > 0 {
				cond, err := conjoin(conds)
				if err != nil {
					return nil, true, err
				}
				out = &plan.Filter{Input: out, Cond: cond}
			}
			// Drop the subqueries' columns again.
			keep := make([]expr.Expr, width)
			for i, c := range in.Schema() {
				keep[i] = &expr.ColRef{Idx: i, Name: c.Name, T: c.Type}
			}
			return &plan.Project{Input: out, Exprs: keep, Cols: in.Schema()}, true, nil
		case *plan.Join:
			if !HasSubquery(n.Cond) {
				return n, false, nil
			}
			out, err := onSubqueriesToFilters(n)
			if err != nil {
				return nil, true, err
			}
			out, err = decorrelateViewSubqueries(out)
			return out, true, err
		case *plan.Project:
			in, err := decorrelateViewSubqueries(n.Input)
			if err != nil {
				return nil, true, err
			}
			l := &lifter{input: in, base: in}
			exprs, err := l.lift(n.Exprs)
			if err != nil {
				return nil, true, err
			}
			return &plan.Project{Input: l.input, Exprs: exprs, Cols: n.Cols}, true, nil
		}
		return n, false, nil
	})
}

// lifter joins the subqueries of expressions over input to it: input
// grows by the columns of each join, to the right of the columns the
// expressions read, which keep their positions.
type lifter struct {
	input plan.Node
	// base is input before the joins: the outer rows, whose distinct
	// values a correlation other than equalities is joined with
	// (view_domain.go).
	base plan.Node
}

// lift returns exprs with each subquery replaced by what it reads from
// the joins it added to l.input.
func (l *lifter) lift(exprs []expr.Expr) ([]expr.Expr, error) {
	out := make([]expr.Expr, len(exprs))
	var firstErr error
	for i, e := range exprs {
		if e == nil || !HasSubquery(e) {
			out[i] = e
			continue
		}
		out[i] = expr.Walk(expr.Clone(e), func(x expr.Expr) expr.Expr {
			if firstErr != nil {
				return x
			}
			r, ok, err := l.replace(x)
			if err != nil {
				firstErr = err
				return x
			}
			if ok {
				return r
			}
			return x
		})
	}
	return out, firstErr
}

// replace rewrites x if it is a subquery expression: EXISTS, a scalar
// subquery, or a quantified comparison with one.
func (l *lifter) replace(x expr.Expr) (expr.Expr, bool, error) {
	if sub, refs, ok := expr.SubqueryOf(x); ok {
		switch sub.Kind {
		case expr.SubqueryExists:
			e, err := l.exists(sub, refs)
			return e, true, err
		case expr.SubqueryScalar:
			e, err := l.scalar(sub, refs)
			return e, true, err
		}
		return nil, true, refuseSubquery(sub, "this use of a subquery")
	}
	f, ok := x.(*expr.Func)
	if !ok || len(f.Args) != 2 {
		return nil, false, nil
	}
	sub, refs, ok := expr.SubqueryOf(f.Args[1])
	if !ok || sub.Kind != expr.SubqueryIn {
		return nil, false, nil
	}
	// Walk visits the comparison before its operands: a subquery in the
	// left operand is lifted first, as the joins below key on it.
	x, err := l.liftOne(f.Args[0])
	if err != nil {
		return nil, true, err
	}
	op, all, _ := expr.QuantifiedOp(f.Name)
	switch {
	case op == "=" && !all:
		e, err := l.in(x, sub, refs, false)
		return e, true, err
	case op == "<>" && all:
		e, err := l.in(x, sub, refs, true)
		return e, true, err
	}
	e, err := l.quantified(x, f.Name, sub, refs)
	return e, true, err
}

// liftOne is lift of one expression.
func (l *lifter) liftOne(e expr.Expr) (expr.Expr, error) {
	out, err := l.lift([]expr.Expr{e})
	if err != nil {
		return nil, err
	}
	return out[0], nil
}

// join puts right to the right of l.input: on the keys (which must not
// be empty, and have one type pairwise), or on a constant key when there
// are none (right is then one row). It returns the position of right's
// first column.
func (l *lifter) join(kind plan.JoinKind, right plan.Node, lk, rk []expr.Expr, note string) int {
	if len(lk) == 0 {
		one := &expr.Const{D: types.NewInt(1), T: types.Int4}
		lk, rk = []expr.Expr{one}, []expr.Expr{one}
	}
	left := l.input.Schema()
	l.input = &plan.Join{Kind: kind, Left: l.input, Right: right, LeftKeys: lk, RightKeys: rk,
		Cols: append(append([]types.Column{}, left...), right.Schema()...), Note: note}
	return len(left)
}

// colRef reads column i of n.
func colRef(n plan.Node, i int) *expr.ColRef {
	c := n.Schema()[i]
	return &expr.ColRef{Idx: i, Name: c.Name, T: c.Type}
}

// groupBy is from grouped by keys, with aggs (none: the groups alone,
// one per distinct key, which change only when a key's first row comes
// or its last goes).
func groupBy(from plan.Node, keys []expr.Expr, aggs ...plan.AggCall) *plan.Aggregate {
	a := &plan.Aggregate{Input: from, GroupBy: keys, Aggs: aggs}
	for i, k := range keys {
		a.Cols = append(a.Cols, types.Column{Name: keyName(k, i), Type: k.Type()})
	}
	for _, c := range aggs {
		a.Cols = append(a.Cols, types.Column{Name: c.Func, Type: c.T})
	}
	return a
}

// presenceKeys are b's correlation keys, or for an uncorrelated
// subquery the constant key 1 on both sides: grouped by it, the
// subquery's rows are one group while there are any, and none when it
// is empty.
func presenceKeys(b *subqueryBody) (inner, outer []expr.Expr) {
	if len(b.inner) > 0 {
		return b.inner, b.outer
	}
	one := &expr.Const{D: types.NewInt(1), T: types.Int4}
	return []expr.Expr{one}, []expr.Expr{one}
}

// keyName names a group key column after the column it is, if it is one.
func keyName(k expr.Expr, i int) string {
	for {
		switch e := k.(type) {
		case *expr.ColRef:
			if e.Name != "" {
				return e.Name
			}
		case *expr.Func:
			if len(e.Args) == 1 && (e.Name == "CAST" || len(e.Name) > 5 && e.Name[:5] == "CAST(") {
				k = e.Args[0]
				continue
			}
		}
		return "key" + string(rune('1'+i))
	}
}

// keyRefs are the group key columns of an aggregate with n keys.
func keyRefs(a *plan.Aggregate, n int) []expr.Expr {
	out := make([]expr.Expr, n)
	for i := range out {
		out[i] = colRef(a, i)
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

// renamed is cols with the first column named name.
func renamed(cols []types.Column, name string) []types.Column {
	out := append([]types.Column{}, cols...)
	if len(out) > 0 {
		out[0].Name = name
	}
	return out
}
