package binder

import (
	"slices"

	"streamdb/plan"
)

// A LIMIT (or FETCH FIRST, WITH TIES or not) of zero rows returns no
// rows, and PostgreSQL's executor then never reads its input: the WHERE,
// the select list and the aggregates under it are not evaluated, so a
// division by zero there is no error. streamdb computes the same by
// putting an empty VALUES of the limit's columns in its place: in a
// view's plan when it is bound (emptyZeroLimits; the view keeps its
// dependencies on the relations its query names, plainViewsNamed), and
// in an ad-hoc query when its LIMIT is known (ResolveLimits).

// emptyZeroLimits returns a copy of n in which each LIMIT whose count is
// a constant zero, with a constant OFFSET, is an empty VALUES.
func emptyZeroLimits(n plan.Node) (plan.Node, error) {
	return MapPlanNodes(n, nil, func(n plan.Node) (plan.Node, bool, error) {
		if l, ok := n.(*plan.Limit); ok && l.Count == 0 && l.CountExpr == nil && l.OffsetExpr == nil {
			return emptyLike(l), true, nil
		}
		return n, false, nil
	})
}

// emptyLike is a relation of n's columns without rows.
func emptyLike(n plan.Node) *plan.Values {
	return &plan.Values{Cols: slices.Clone(n.Schema())}
}
