package binder

import (
	"streamdb/expr"
	"streamdb/plan"
)

// MapPlan returns a copy of the plan in which every expression is what fn
// returns for it and each scan is what scan returns (scans stay when scan
// is nil). The plan itself is shared between executions and never
// changed; fn must not change the expressions it is given either (clone
// first). The first error is returned, with the rest of the copy.
func MapPlan(n plan.Node, fn func(expr.Expr) (expr.Expr, error), scan func(*plan.Scan) (plan.Node, error)) (plan.Node, error) {
	var node func(plan.Node) (plan.Node, bool, error)
	if scan != nil {
		node = func(n plan.Node) (plan.Node, bool, error) {
			if s, ok := n.(*plan.Scan); ok {
				out, err := scan(s)
				return out, true, err
			}
			return n, false, nil
		}
	}
	return MapPlanNodes(n, fn, node)
}

// MapPlanNodes is MapPlan where node, if not nil, sees each node first:
// when it answers done, its node stands in place of the subtree (which
// is not walked). fn may be nil (expressions stay).
func MapPlanNodes(n plan.Node, fn func(expr.Expr) (expr.Expr, error), node func(plan.Node) (plan.Node, bool, error)) (plan.Node, error) {
	var firstErr error
	if fn == nil {
		fn = func(e expr.Expr) (expr.Expr, error) { return e, nil }
	}
	one := func(e expr.Expr) expr.Expr {
		out, err := fn(e)
		if err != nil && firstErr == nil {
			firstErr = err
		}
		return out
	}
	all := func(es []expr.Expr) []expr.Expr {
		out := make([]expr.Expr, len(es))
		for i, e := range es {
			out[i] = one(e)
		}
		return out
	}
	var walk func(plan.Node) plan.Node
	walk = func(n plan.Node) plan.Node {
		if node != nil {
			out, done, err := node(n)
			if err != nil && firstErr == nil {
				firstErr = err
			}
			if done {
				return out
			}
		}
		switch n := n.(type) {
		case *plan.Filter:
			return &plan.Filter{Input: walk(n.Input), Cond: one(n.Cond)}
		case *plan.Project:
			return &plan.Project{Input: walk(n.Input), Exprs: all(n.Exprs), Cols: n.Cols}
		case *plan.Aggregate:
			aggs := make([]plan.AggCall, len(n.Aggs))
			for i, a := range n.Aggs {
				a.Arg = one(a.Arg)
				aggs[i] = a
			}
			return &plan.Aggregate{Input: walk(n.Input), GroupBy: all(n.GroupBy), Aggs: aggs, Cols: n.Cols, UID: n.UID}
		case *plan.Sort:
			keys := make([]plan.SortKey, len(n.Keys))
			for i, k := range n.Keys {
				k.Expr = one(k.Expr)
				keys[i] = k
			}
			return &plan.Sort{Input: walk(n.Input), Keys: keys}
		case *plan.Window:
			return &plan.Window{Input: walk(n.Input), TimeCol: n.TimeCol, Size: n.Size, Slide: n.Slide, Cols: n.Cols}
		case *plan.Join:
			return &plan.Join{Kind: n.Kind, Left: walk(n.Left), Right: walk(n.Right),
				LeftKeys: all(n.LeftKeys), RightKeys: all(n.RightKeys), Cond: one(n.Cond), Cols: n.Cols, Note: n.Note}
		case *plan.Union:
			inputs := make([]plan.Node, len(n.Inputs))
			for i, in := range n.Inputs {
				inputs[i] = walk(in)
			}
			return &plan.Union{Inputs: inputs, Cols: n.Cols}
		case *plan.Limit:
			l := &plan.Limit{Input: walk(n.Input), Count: n.Count, Offset: n.Offset, WithTies: n.WithTies}
			if n.CountExpr != nil {
				l.CountExpr = one(n.CountExpr)
			}
			if n.OffsetExpr != nil {
				l.OffsetExpr = one(n.OffsetExpr)
			}
			return l
		case *plan.TopN:
			t := *n
			t.Input, t.PartitionBy = walk(n.Input), all(n.PartitionBy)
			t.Order = make([]plan.SortKey, len(n.Order))
			for i, k := range n.Order {
				k.Expr = one(k.Expr)
				t.Order[i] = k
			}
			return &t
		case *plan.Values:
			rows := make([][]expr.Expr, len(n.Rows))
			for i, r := range n.Rows {
				rows[i] = all(r)
			}
			return &plan.Values{Rows: rows, Cols: n.Cols}
		case *plan.WindowFunc:
			w := *n
			w.Input, w.Args, w.PartitionBy = walk(n.Input), all(n.Args), all(n.PartitionBy)
			w.Order = make([]plan.SortKey, len(n.Order))
			for i, k := range n.Order {
				k.Expr = one(k.Expr)
				w.Order[i] = k
			}
			if n.Agg != nil {
				a := *n.Agg
				a.Arg = one(a.Arg)
				w.Agg = &a
			}
			if n.Frame.RangeStart != nil {
				w.Frame.RangeStart = one(n.Frame.RangeStart)
			}
			if n.Frame.RangeEnd != nil {
				w.Frame.RangeEnd = one(n.Frame.RangeEnd)
			}
			return &w
		case *SRFNode:
			c := *n
			c.Calls = make([]SRFCall, len(n.Calls))
			for i, call := range n.Calls {
				call.Args = all(call.Args)
				c.Calls[i] = call
			}
			return &c
		case *LateralJoin:
			l := *n
			l.Left, l.Right = walk(n.Left), walk(n.Right)
			l.Outer, l.Cond = all(n.Outer), one(n.Cond)
			return &l
		case *RecursiveCTE:
			r := *n
			r.Anchor, r.Step = walk(n.Anchor), walk(n.Step)
			return &r
		case *SetOp:
			s := *n
			s.Left, s.Right = walk(n.Left), walk(n.Right)
			return &s
		}
		return n
	}
	out := walk(n)
	return out, firstErr
}
