package binder

import (
	"fmt"

	"streamdb/expr"
	"streamdb/plan"
	"streamdb/types"
)

// The joins each kind of view subquery becomes (see view_subquery.go).
// The subquery side is grouped so that its rows change only when the
// answer can: a group per key without aggregates appears with the key's
// first row and goes with its last, so inner rows coming and going under
// a key that stays matched do not retract and re-add the outer rows
// joined with it.

// semiJoin joins l.input with the subquery of c, a condition of WHERE,
// when c is [NOT] EXISTS, or IN / = ANY: rows pass the join only when c
// holds, so c is done (and dropped from the filter).
func (l *lifter) semiJoin(c expr.Expr) (bool, error) {
	not := false
	if f, ok := c.(*expr.Func); ok && f.Name == "NOT" && len(f.Args) == 1 {
		not, c = true, f.Args[0]
	}
	if sub, refs, ok := expr.SubqueryOf(c); ok && sub.Kind == expr.SubqueryExists {
		b, err := l.split(sub, refs, modeExists)
		if err != nil {
			return false, err
		}
		inner, outer := presenceKeys(b)
		keys := groupBy(b.from, inner)
		if !not {
			l.join(plan.InnerJoin, keys, outer, keyRefs(keys, len(inner)), "Semi Join for "+sub.String())
			return true, nil
		}
		at := l.join(plan.LeftJoin, keys, outer, keyRefs(keys, len(inner)), "Anti Join for NOT "+sub.String())
		l.input = &plan.Filter{Input: l.input, Cond: expr.IsNull(colRef(l.input, at), false)}
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
	// A subquery in the left operand is lifted first: the join keys on it.
	lhs, err := l.liftOne(f.Args[0])
	if err != nil {
		return false, err
	}
	b, err := l.split(sub, refs, modeIn)
	if err != nil {
		return false, err
	}
	x, y, err := sameKeyType(lhs, b.sel)
	if err != nil {
		return false, err
	}
	matches := groupBy(b.from, append(append([]expr.Expr{}, b.inner...), y))
	l.join(plan.InnerJoin, matches, append(append([]expr.Expr{}, b.outer...), x), keyRefs(matches, len(b.inner)+1),
		fmt.Sprintf("Semi Join for %s %s %s", f.Args[0], f.Name, sub))
	return true, nil
}

// exists is EXISTS (sub) read from a left join with the subquery's keys:
// true where the outer row found its key.
func (l *lifter) exists(sub *expr.Subquery, refs []expr.Expr) (expr.Expr, error) {
	b, err := l.split(sub, refs, modeExists)
	if err != nil {
		return nil, err
	}
	inner, outer := presenceKeys(b)
	keys := groupBy(b.from, inner)
	at := l.join(plan.LeftJoin, keys, outer, keyRefs(keys, len(inner)), "Subquery keys joined for "+sub.String())
	return expr.IsNull(colRef(l.input, at), true), nil
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
	b, err := l.split(sub, refs, modeScalar)
	if err != nil {
		return nil, err
	}
	inner, outer := presenceKeys(b)
	g := groupBy(b.from, inner, b.agg.Aggs...)
	at := l.join(plan.LeftJoin, g, outer, keyRefs(g, len(inner)), "Subquery aggregate joined on the correlation for "+sub.String()) + len(inner)
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
				z, err := countOrZero(v)
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

// countOrZero is COALESCE(count, 0): a count read from a left join is
// NULL where the outer row has no group, and a count over no rows is 0.
func countOrZero(count expr.Expr) (expr.Expr, error) {
	return expr.Coalesce([]expr.Expr{count, &expr.Const{D: types.NewInt(0), T: types.Int8}})
}

// in is x IN (sub), or x NOT IN (sub) when not is set, with SQL's NULL
// rules, read from a left join with the matches (keys and y) and one
// with whether each key's values hold a NULL.
func (l *lifter) in(x expr.Expr, sub *expr.Subquery, refs []expr.Expr, not bool) (expr.Expr, error) {
	name, join := "IN", "Semi Join"
	if not {
		name, join = "NOT IN", "Anti Join"
	}
	text := fmt.Sprintf("%s %s %s", x, name, sub)
	b, err := l.split(sub, refs, modeIn)
	if err != nil {
		return nil, err
	}
	x, y, err := sameKeyType(x, b.sel)
	if err != nil {
		return nil, err
	}
	nk := len(b.inner)
	matches := groupBy(b.from, append(append([]expr.Expr{}, b.inner...), y))
	m := l.join(plan.LeftJoin, matches, append(append([]expr.Expr{}, b.outer...), x), keyRefs(matches, nk+1),
		join+" (matches) for "+text)
	empty, hasNull, _, err := l.nullCheck(b, y, "Subquery NULL check for "+text)
	if err != nil {
		return nil, err
	}
	yes, no := &expr.Const{D: types.NewBool(true), T: types.Bool}, &expr.Const{D: types.NewBool(false), T: types.Bool}
	unknown, err := expr.Binary("OR", expr.IsNull(x, false), hasNull)
	if err != nil {
		return nil, err
	}
	null := &expr.Const{D: types.Null, T: types.Bool}
	e, err := expr.Case([]expr.Expr{expr.IsNull(colRef(l.input, m), true), empty, unknown}, []expr.Expr{yes, no, null}, no)
	if err != nil || !not {
		return e, err
	}
	return expr.Not(e)
}

// nullCheck left joins l.input with, per key of b, whether one of the
// values y is NULL, and extra aggregates of y. It returns "the subquery
// has no rows for the outer row" and "one of its values is NULL", and
// the position of the extra aggregates' first column.
func (l *lifter) nullCheck(b *subqueryBody, y expr.Expr, note string, extra ...plan.AggCall) (empty, hasNull expr.Expr, at int, err error) {
	one := &expr.Const{D: types.NewInt(1), T: types.Int4}
	isNull, err := expr.Case([]expr.Expr{expr.IsNull(y, false)}, []expr.Expr{one}, &expr.Const{D: types.NewInt(0), T: types.Int4})
	if err != nil {
		return nil, nil, 0, err
	}
	inner, outer := presenceKeys(b)
	aggs := append([]plan.AggCall{{Func: "max", Arg: isNull, T: types.Int4}}, extra...)
	g := groupBy(b.from, inner, aggs...)
	g.Cols[len(inner)].Name = "has_null"
	k := l.join(plan.LeftJoin, g, outer, keyRefs(g, len(inner)), note)
	if hasNull, err = expr.Binary("=", colRef(l.input, k+len(inner)), one); err != nil {
		return nil, nil, 0, err
	}
	return expr.IsNull(colRef(l.input, k), false), hasNull, k + len(inner) + 1, nil
}
