package binder

import (
	"streamdb/catalog"
	"streamdb/plan"
	"streamdb/sqlerr"
)

// checkConstantLimits refuses a LIMIT or OFFSET of a view that is read
// when a query runs (a subquery): a view keeps one top-N, whose bound
// does not change.
func checkConstantLimits(n plan.Node) error {
	if l, ok := n.(*plan.Limit); ok && (l.CountExpr != nil || l.OffsetExpr != nil) {
		return sqlerr.New(sqlerr.FeatureNotSupported, "LIMIT and OFFSET of a materialized view must be constants, not subqueries").
			WithHint("Write the count as a number, or query the view with that LIMIT.")
	}
	for _, c := range n.Children() {
		if err := checkConstantLimits(c); err != nil {
			return err
		}
	}
	return nil
}

// CheckStreamable refuses, at CREATE time, plans the streaming engine does
// not run yet.
func CheckStreamable(n plan.Node) error {
	if err := checkDeterministic(n); err != nil {
		return err
	}
	if err := checkConstantLimits(n); err != nil {
		return err
	}
	if len(SubqueryPlans(n)) > 0 {
		return sqlerr.New(sqlerr.FeatureNotSupported, "subqueries in aggregate arguments, in GROUP BY or in ORDER BY are not supported in a materialized view; in WHERE, HAVING, JOIN ... ON and the select list they are").
			WithHint("Move the subquery to WHERE, write it as a join, or query it ad hoc (SELECT supports subqueries of every kind, correlated or not).")
	}
	switch n := n.(type) {
	case *plan.Sort, *plan.Limit, *plan.TopN:
		// ORDER BY ... LIMIT and ranking with a bound run as a TopN.
		if err := plan.CheckStreamableTopN(n); err != nil {
			return err
		}
	case *plan.WindowFunc:
		return sqlerr.New(sqlerr.FeatureNotSupported, "window function %s() is not supported in a materialized view yet; only row_number(), rank() and dense_rank() without a frame are", n.Func).
			WithHint("Query it ad hoc, or rank in the view and compute the rest when you read it.")
	case *SRFNode:
		return viewSRFError(n)
	case *LateralJoin:
		if s, ok := n.Right.(*SRFNode); ok {
			return viewSRFError(s)
		}
		return sqlerr.New(sqlerr.FeatureNotSupported, "LATERAL subqueries that refer to the FROM items before them are not supported in a materialized view yet").
			WithHint("Query it ad hoc, or write the subquery as a join with GROUP BY.")
	case *RecursiveCTE:
		return sqlerr.New(sqlerr.FeatureNotSupported, "WITH RECURSIVE is not supported in a materialized view: it is evaluated by iterating to a fixed point, which a view would redo on every change").
			WithHint("Query it ad hoc, or write a bounded recursion as joins.")
	case *SetOp:
		return sqlerr.New(sqlerr.FeatureNotSupported, "INTERSECT and EXCEPT are not supported in a materialized view yet").
			WithHint("Query it ad hoc, or write INTERSECT as a join and EXCEPT as NOT EXISTS.")
	case *plan.Scan:
		if n.Object.Kind != catalog.KindStream && n.Object.Kind != catalog.KindView && n.Object.Kind != catalog.KindTable {
			return sqlerr.New(sqlerr.FeatureNotSupported, "a materialized view over %s %q is not supported", n.Object.Kind, n.Object.Name)
		}
	}
	for _, c := range n.Children() {
		if err := CheckStreamable(c); err != nil {
			return err
		}
	}
	return nil
}
