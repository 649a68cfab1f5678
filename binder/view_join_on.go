package binder

import (
	"streamdb/expr"
	"streamdb/plan"
	"streamdb/sqlerr"
)

// onSubqueriesToFilters moves the conditions with subqueries out of the
// ON of join j to where they mean the same and a view decorrelates them,
// a filter, and returns the rewritten plan (not yet decorrelated):
//
//   - an inner join keeps the pairs for which ON holds, which are the
//     pairs of the join without those conditions that pass them as a
//     filter above it (as if they were in WHERE);
//   - a left join pads a left row whose pairs all fail ON, so a
//     condition can leave ON only if it reads nothing of the left row: it
//     filters the right rows before the join, which then pads the same
//     left rows; a right join alike with the sides swapped.
//
// Any other subquery in ON (of a full join, or of an outer join reading
// the row it keeps) is refused with 0A000.
func onSubqueriesToFilters(j *plan.Join) (plan.Node, error) {
	nl := len(j.Left.Schema())
	plain, withSub := splitBySubquery(j.Cond)
	rest, err := conjoin(plain)
	if err != nil {
		return nil, err
	}
	out := *j
	out.Cond = rest
	onSub, err := conjoin(withSub)
	if err != nil {
		return nil, err
	}
	switch j.Kind {
	case plan.InnerJoin:
		return &plan.Filter{Input: &out, Cond: onSub}, nil
	case plan.LeftJoin:
		if readsColumnsIn(onSub, 0, nl) {
			break
		}
		out.Right = &plan.Filter{Input: j.Right, Cond: shiftColRefs(onSub, -nl)}
		return &out, nil
	case plan.RightJoin:
		if readsColumnsIn(onSub, nl, len(j.Cols)) {
			break
		}
		out.Left = &plan.Filter{Input: j.Left, Cond: onSub}
		return &out, nil
	}
	return nil, sqlerr.New(sqlerr.FeatureNotSupported,
		"a subquery in the ON condition of a %s join that reads the columns of the side the join keeps is not supported in a materialized view: %s", j.Kind, onSub).
		WithHint("Move the condition to WHERE if an inner join is meant, or query it ad hoc.")
}

// readsColumnsIn reports whether e reads a column in [from, to) of its
// row (in the outer values of its correlated subqueries too).
func readsColumnsIn(e expr.Expr, from, to int) bool {
	found := false
	expr.Visit(e, func(x expr.Expr) {
		if c, ok := x.(*expr.ColRef); ok && c.Idx >= from && c.Idx < to {
			found = true
		}
	})
	return found
}

// conjoin is the conditions joined by AND; nil when there are none.
func conjoin(conds []expr.Expr) (expr.Expr, error) {
	if len(conds) == 0 {
		return nil, nil
	}
	out := conds[0]
	for _, c := range conds[1:] {
		var err error
		if out, err = expr.Binary("AND", out, c); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// splitBySubquery splits the conjuncts of cond into those without
// subqueries and those with.
func splitBySubquery(cond expr.Expr) (plain, withSub []expr.Expr) {
	for _, c := range plan.Conjuncts(cond) {
		if HasSubquery(c) {
			withSub = append(withSub, c)
		} else {
			plain = append(plain, c)
		}
	}
	return plain, withSub
}
