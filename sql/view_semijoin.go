package sql

import (
	"fmt"

	"streamdb/expr"
	"streamdb/plan"
	"streamdb/types"
)

// The joins each kind of view subquery becomes (see view_subquery.go).

// semiJoin joins l.input with the subquery of c, a condition of WHERE,
// when c is [NOT] EXISTS or IN with a correlated subquery: rows pass the
// join only when c holds, so c is done (and dropped from the filter).
func (l *lifter) semiJoin(c expr.Expr) (bool, error) {
	not := false
	if f, ok := c.(*expr.Func); ok && f.Name == "NOT" && len(f.Args) == 1 {
		not, c = true, f.Args[0]
	}
	if sub, refs, ok := expr.SubqueryOf(c); ok && sub.Kind == expr.SubqueryExists && len(refs) > 0 {
		b, err := splitSubquery(sub, refs, modeExists)
		if err != nil || len(b.inner) == 0 {
			return false, err
		}
		counts := countBy(b.from, b.inner)
		if !not {
			l.join(plan.InnerJoin, counts, b.outer, keyRefs(counts, len(b.inner)), "Semi Join for "+sub.String())
			return true, nil
		}
		at := l.join(plan.LeftJoin, counts, b.outer, keyRefs(counts, len(b.inner)), "Anti Join for NOT "+sub.String())
		l.input = &plan.Filter{Input: l.input, Cond: expr.IsNull(colRef(l.input, at+len(b.inner)), false)}
		return true, nil
	}
	f, ok := c.(*expr.Func)
	if not || !ok || len(f.Args) != 2 {
		return false, nil
	}
	sub, refs, ok := expr.SubqueryOf(f.Args[1])
	if op, all, _ := expr.QuantifiedOp(f.Name); !ok || sub.Kind != expr.SubqueryIn || op != "=" || all {
		return false, nil
	}
	b, err := splitSubquery(sub, refs, modeIn)
	if err != nil {
		return false, err
	}
	x, y, err := sameKeyType(f.Args[0], b.sel)
	if err != nil {
		return false, err
	}
	matches := countBy(b.from, append(append([]expr.Expr{}, b.inner...), y))
	l.join(plan.InnerJoin, matches, append(append([]expr.Expr{}, b.outer...), x), keyRefs(matches, len(b.inner)+1),
		fmt.Sprintf("Semi Join for %s %s %s", f.Args[0], f.Name, sub))
	return true, nil
}

// exists is EXISTS (sub) read from a join with the subquery's count.
func (l *lifter) exists(sub *expr.Subquery, refs []expr.Expr) (expr.Expr, error) {
	b, err := splitSubquery(sub, refs, modeExists)
	if err != nil {
		return nil, err
	}
	counts := countBy(b.from, b.inner)
	if len(b.inner) == 0 {
		at := l.join(plan.InnerJoin, counts, nil, nil, "Subquery count joined on a constant key for "+sub.String())
		return expr.Binary(">", colRef(l.input, at), &expr.Const{D: types.NewInt(0), T: types.Int8})
	}
	at := l.join(plan.LeftJoin, counts, b.outer, keyRefs(counts, len(b.inner)), "Subquery count joined for "+sub.String())
	return expr.IsNull(colRef(l.input, at+len(b.inner)), true), nil
}

// scalar is the value of a scalar subquery that is an aggregate without
// GROUP BY, read from a join with the aggregate grouped by the
// correlation keys.
func (l *lifter) scalar(sub *expr.Subquery, refs []expr.Expr) (expr.Expr, error) {
	if len(refs) == 0 && !oneAggregateRow(sub.Plan.(plan.Node)) {
		return nil, refuseSubquery(sub, "a scalar subquery that may return several rows (only an aggregate without GROUP BY is one row)")
	}
	if len(refs) == 0 {
		// One row whatever its input: joined on a constant key as it is.
		from, err := decorrelateViewSubqueries(sub.Plan.(plan.Node))
		if err != nil {
			return nil, err
		}
		at := l.join(plan.InnerJoin, from, nil, nil, "")
		j := l.input.(*plan.Join)
		j.Cols = append(j.Cols[:at], renamed(j.Cols[at:], fmt.Sprintf("(subquery %d)", at))...)
		return colRef(l.input, at), nil
	}
	b, err := splitSubquery(sub, refs, modeScalar)
	if err != nil {
		return nil, err
	}
	g := countBy(b.from, b.inner, b.agg.Aggs...)
	kind, note := plan.LeftJoin, "Subquery aggregate joined on the correlation for "+sub.String()
	if len(b.inner) == 0 {
		kind, note = plan.InnerJoin, "Subquery aggregate joined on a constant key for "+sub.String()
	}
	at := l.join(kind, g, b.outer, keyRefs(g, len(b.inner)), note) + len(b.inner)
	// The select list reads the aggregates: from the join, with what an
	// aggregate gives over no rows where an outer row has no group.
	var werr error
	out := substitute(b.sel, func(x expr.Expr) (expr.Expr, bool) {
		switch x := x.(type) {
		case *expr.OuterRef:
			if x.N < len(refs) {
				return refs[x.N], true
			}
		case *expr.ColRef:
			var v expr.Expr = colRef(l.input, at+x.Idx)
			if b.agg.Aggs[x.Idx].Func == "count" {
				z, err := expr.Coalesce([]expr.Expr{v, &expr.Const{D: types.NewInt(0), T: types.Int8}})
				if err != nil {
					werr = err
				}
				v = z
			}
			return v, true
		}
		return nil, false
	})
	return out, werr
}

// in is x IN (sub), or x NOT IN (sub) when not is set, with SQL's NULL
// rules, read from a join with the matches and one with the counts.
func (l *lifter) in(x expr.Expr, sub *expr.Subquery, refs []expr.Expr, not bool) (expr.Expr, error) {
	name, join := "IN", "Semi Join"
	if not {
		name, join = "NOT IN", "Anti Join"
	}
	text := fmt.Sprintf("%s %s %s", x, name, sub)
	b, err := splitSubquery(sub, refs, modeIn)
	if err != nil {
		return nil, err
	}
	x, y, err := sameKeyType(x, b.sel)
	if err != nil {
		return nil, err
	}
	nk := len(b.inner)
	matches := countBy(b.from, append(append([]expr.Expr{}, b.inner...), y))
	matches.Cols[nk+1].Name = "matches"
	m := l.join(plan.LeftJoin, matches, append(append([]expr.Expr{}, b.outer...), x), keyRefs(matches, nk+1),
		join+" (matches) for "+text) + nk + 1
	totals := countBy(b.from, b.inner, plan.AggCall{Func: "count", T: types.Int8},
		plan.AggCall{Func: "count", Arg: y, T: types.Int8})
	totals.Cols[nk].Name, totals.Cols[nk+1].Name = "rows", "non_null"
	kind := plan.LeftJoin
	if nk == 0 {
		kind = plan.InnerJoin
	}
	t := l.join(kind, totals, b.outer, keyRefs(totals, nk), "Subquery counts (rows, non-NULL values) for "+text) + nk
	zero := &expr.Const{D: types.NewInt(0), T: types.Int8}
	rows, nonNull := colRef(l.input, t), colRef(l.input, t+1)
	matched := expr.IsNull(colRef(l.input, m), true)
	n, err := expr.Coalesce([]expr.Expr{rows, zero})
	if err != nil {
		return nil, err
	}
	empty, err := expr.Binary("=", n, zero)
	if err != nil {
		return nil, err
	}
	someNull, err := expr.Binary(">", rows, nonNull)
	if err != nil {
		return nil, err
	}
	unknown, err := expr.Binary("OR", expr.IsNull(x, false), someNull)
	if err != nil {
		return nil, err
	}
	yes, no := &expr.Const{D: types.NewBool(true), T: types.Bool}, &expr.Const{D: types.NewBool(false), T: types.Bool}
	null := &expr.Const{D: types.Null, T: types.Bool}
	e, err := expr.Case([]expr.Expr{matched, empty, unknown}, []expr.Expr{yes, no, null}, no)
	if err != nil || !not {
		return e, err
	}
	return expr.Not(e)
}
