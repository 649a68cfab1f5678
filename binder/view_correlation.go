package binder

import (
	"streamdb/expr"
	"streamdb/plan"
	"streamdb/sqlerr"
	"streamdb/types"
)

// A subquery of a materialized view is decorrelated by taking it apart
// into the rows it reads and the conditions that tie those rows to the
// outer row: each condition inner = outer of its WHERE becomes a join
// key, and the rest of the subquery no longer depends on the outer row,
// so it runs as a dataflow of its own that the outer rows are joined
// with (view_subquery.go). The other conditions that refer to the outer
// row (x.b < t.b, or a nested subquery that refers to it) are kept
// aside: the subquery's rows are then joined with the distinct outer
// values first (view_domain.go).

// subqueryMode is how the subquery's rows are used, which decides what
// of its top is kept.
type subqueryMode int

const (
	// modeExists reads only whether rows exist: the select list, ORDER
	// BY and a LIMIT that is not 0 do not matter.
	modeExists subqueryMode = iota
	// modeIn reads the one column of the select list.
	modeIn
	// modeScalar reads the one value of an aggregate without GROUP BY.
	modeScalar
)

// subqueryBody is a view's subquery taken apart.
type subqueryBody struct {
	// from is the subquery's rows before its select list (and before its
	// aggregate, for modeScalar): its FROM filtered by the conditions of
	// its WHERE that do not refer to the outer row. It does not refer to
	// the outer row.
	from plan.Node
	// inner[i] = outer[i] is the correlation: inner over from's row,
	// outer over the outer query's row, both of one type. Empty for an
	// uncorrelated subquery.
	inner, outer []expr.Expr
	// residual are the conditions of the subquery's WHERE that refer to
	// the outer row other than as inner = outer, over from's row and the
	// outer references; outerKeys are outer before its references were
	// replaced by the outer values. Set by splitSubquery only while
	// residual is not empty or the values the subquery gives refer to
	// the outer row (readsOuter), and then used up by lifter.split.
	residual, outerKeys []expr.Expr
	// sel is the value the subquery gives: over from's row (modeIn), or
	// over agg's row and the outer references (modeScalar).
	sel expr.Expr
	// agg is the aggregate of a modeScalar subquery, over from.
	agg *plan.Aggregate
}

// splitSubquery takes the subquery sub, whose outer references stand for
// refs (over the outer row), apart for mode; a subquery that cannot be
// run incrementally that way is refused with 0A000.
func splitSubquery(sub *expr.Subquery, refs []expr.Expr, mode subqueryMode) (*subqueryBody, error) {
	p := sub.Plan.(plan.Node)
	body := &subqueryBody{}
	if len(refs) == 0 && mode != modeScalar {
		// Uncorrelated: the subquery's rows, whatever its shape.
		body.from = p
		if mode == modeIn {
			c := p.Schema()[0]
			body.sel = &expr.ColRef{Idx: 0, Name: c.Name, T: c.Type}
		}
		return body, body.decorrelateFrom()
	}
	switch mode {
	case modeExists:
		for peeled := true; peeled; {
			switch n := p.(type) {
			case *plan.Project:
				p = n.Input
			case *plan.Sort:
				p = n.Input
			case *plan.Limit:
				if n.Offset != 0 || n.Count == 0 {
					return nil, refuseSubquery(sub, "LIMIT 0 or OFFSET in a correlated EXISTS subquery")
				}
				p = n.Input
			default:
				peeled = false
			}
		}
	case modeIn:
		pr, ok := p.(*plan.Project)
		if !ok {
			return nil, refuseSubquery(sub, "a correlated IN subquery other than SELECT expression FROM ... WHERE ...")
		}
		// A select list that refers to the outer row is read over the
		// domain of the outer values (view_domain.go).
		body.sel, p = pr.Exprs[0], pr.Input
	case modeScalar:
		body.sel = nil
		if pr, ok := p.(*plan.Project); ok {
			body.sel, p = pr.Exprs[0], pr.Input
		}
		a, ok := p.(*plan.Aggregate)
		if !ok || len(a.GroupBy) > 0 {
			return nil, sqlerr.New(sqlerr.FeatureNotSupported,
				"a correlated scalar subquery in a materialized view must be an aggregate without GROUP BY or HAVING (one value for each outer row); %s may return several rows", sub).
				WithHint("Query it ad hoc, or write it as a join.")
		}
		// Aggregate arguments that refer to the outer row are read over
		// the domain of the outer values (view_domain.go).
		body.agg, p = a, a.Input
		if body.sel == nil {
			c := a.Cols[0]
			body.sel = &expr.ColRef{Idx: 0, Name: c.Name, T: c.Type}
		}
	}
	from, inner, outer, residual, err := pullCorrelation(sub, p)
	if err != nil {
		return nil, err
	}
	body.inner = inner
	if len(residual) > 0 || body.readsOuter() {
		body.residual, body.outerKeys = residual, outer
	} else {
		for _, o := range outer {
			body.outer = append(body.outer, withOuterValues(o, refs))
		}
	}
	p = from
	body.from = p
	if planHasOuterRef(p) {
		return nil, refuseSubquery(sub, "a subquery that refers to the outer query other than in its WHERE")
	}
	return body, body.decorrelateFrom()
}

// readsOuter reports whether the values b gives refer to the outer row:
// its IN select list, or the arguments of its aggregate (a scalar
// subquery's select list reads the outer row after the aggregate, which
// needs no domain).
func (b *subqueryBody) readsOuter() bool {
	if b.agg != nil {
		for _, c := range b.agg.Aggs {
			if c.Arg != nil && hasOuterRef(c.Arg) {
				return true
			}
		}
		return false
	}
	return b.sel != nil && hasOuterRef(b.sel)
}

// pullCorrelation takes the correlation out of p, the rows of subquery
// sub: the conditions of the filters in p that refer to the outer row
// and are not under anything but filters and inner joins (where the
// binder puts the conditions of WHERE). It returns p without them, the
// keys of the conditions inner = outer (inner over p's row, outer over
// the outer references, of one type), and the other conditions (over p's
// row and the outer references).
func pullCorrelation(sub *expr.Subquery, p plan.Node) (from plan.Node, inner, outer, residual []expr.Expr, err error) {
	switch n := p.(type) {
	case *plan.Filter:
		in, inner, outer, residual, err := pullCorrelation(sub, n.Input)
		if err != nil {
			return nil, nil, nil, nil, err
		}
		keep, ci, co, cr, err := splitCorrelated(sub, plan.Conjuncts(n.Cond))
		if err != nil {
			return nil, nil, nil, nil, err
		}
		inner, outer, residual = append(inner, ci...), append(outer, co...), append(residual, cr...)
		if len(keep) == 0 {
			return in, inner, outer, residual, nil
		}
		cond, err := conjoin(keep)
		if err != nil {
			return nil, nil, nil, nil, err
		}
		return &plan.Filter{Input: in, Cond: cond}, inner, outer, residual, nil
	case *plan.Join:
		if n.Kind != plan.InnerJoin {
			return p, nil, nil, nil, nil
		}
		l, li, lo, lr, err := pullCorrelation(sub, n.Left)
		if err != nil {
			return nil, nil, nil, nil, err
		}
		r, ri, ro, rr, err := pullCorrelation(sub, n.Right)
		if err != nil {
			return nil, nil, nil, nil, err
		}
		// The conditions of an inner join's ON that refer to the outer row
		// are the subquery's WHERE conditions as well (both are over the
		// joined row, which Filters and inner joins keep).
		var keep, ci, co, cr []expr.Expr
		if n.Cond != nil && hasOuterRef(n.Cond) {
			if keep, ci, co, cr, err = splitCorrelated(sub, plan.Conjuncts(n.Cond)); err != nil {
				return nil, nil, nil, nil, err
			}
		}
		if len(li)+len(ri)+len(lr)+len(rr)+len(ci)+len(cr) == 0 {
			return p, nil, nil, nil, nil
		}
		j := *n
		j.Left, j.Right = l, r
		if len(ci)+len(cr) > 0 {
			j.Cond = nil
			if len(keep) > 0 {
				if j.Cond, err = conjoin(keep); err != nil {
					return nil, nil, nil, nil, err
				}
			}
		}
		nl := len(l.Schema())
		for _, k := range ri {
			li = append(li, shiftColRefs(k, nl))
		}
		for _, c := range rr {
			lr = append(lr, shiftColRefs(c, nl))
		}
		return &j, append(li, ci...), append(append(lo, ro...), co...), append(lr, cr...), nil
	}
	return p, nil, nil, nil, nil
}

// splitCorrelated splits conds, conjuncts over a subquery's row, into
// those that do not refer to the outer row (keep), the correlation keys
// inner = outer, and the other conditions that refer to it (residual).
func splitCorrelated(sub *expr.Subquery, conds []expr.Expr) (keep, inner, outer, residual []expr.Expr, err error) {
	for _, c := range conds {
		if !hasOuterRef(c) {
			keep = append(keep, c)
			continue
		}
		if HasSubquery(c) {
			// A nested subquery that refers to the query around both:
			// decorrelated over the domain of the outer values, where the
			// outer row is columns of the subquery's row (view_domain.go).
			residual = append(residual, c)
			continue
		}
		i, o, ok, err := correlationKey(c)
		if err != nil {
			return nil, nil, nil, nil, err
		}
		if !ok {
			residual = append(residual, c)
			continue
		}
		inner, outer = append(inner, i), append(outer, o)
	}
	return keep, inner, outer, residual, nil
}

// shiftColRefs is e with its column references moved by n.
func shiftColRefs(e expr.Expr, n int) expr.Expr {
	return substitute(e, func(x expr.Expr) (expr.Expr, bool) {
		if c, ok := x.(*expr.ColRef); ok {
			s := *c
			s.Idx += n
			return &s, true
		}
		return nil, false
	})
}

// decorrelateFrom rewrites the subqueries nested in from.
func (b *subqueryBody) decorrelateFrom() error {
	from, err := decorrelateViewSubqueries(b.from)
	b.from = from
	return err
}

// refuseSubquery is the 0A000 for what of sub a view cannot run.
func refuseSubquery(sub *expr.Subquery, what string) error {
	return sqlerr.New(sqlerr.FeatureNotSupported, "%s is not supported in a materialized view: %s", what, sub).
		WithHint("Query it ad hoc, or write the subquery as a join.")
}

// correlationKey splits c, a condition of a subquery's WHERE that refers
// to the outer row, into inner = outer: inner over the subquery's row,
// outer over the outer references, cast to one type. ok is false when c
// is not such an equality.
func correlationKey(c expr.Expr) (inner, outer expr.Expr, ok bool, err error) {
	f, isFunc := c.(*expr.Func)
	if !isFunc || f.Name != "=" || len(f.Args) != 2 {
		return nil, nil, false, nil
	}
	a, b := f.Args[0], f.Args[1]
	if onlyOuter(a) && !hasOuterRef(b) && !expr.IsConstant(b) {
		inner, outer = b, a
	} else if onlyOuter(b) && !hasOuterRef(a) && !expr.IsConstant(a) {
		inner, outer = a, b
	} else {
		return nil, nil, false, nil
	}
	inner, outer, err = sameKeyType(inner, outer)
	return inner, outer, err == nil, err
}

// sameKeyType casts two join keys to the type = compares them in; keys
// of mixed integer widths become bigint, as they must encode alike.
func sameKeyType(a, b expr.Expr) (expr.Expr, expr.Expr, error) {
	t, err := expr.CommonType([]types.Type{a.Type(), b.Type()})
	if err != nil {
		return nil, nil, sqlerr.New(sqlerr.UndefinedFunction, "operator does not exist: %s = %s", a.Type(), b.Type())
	}
	if t.IsInteger() {
		t = types.Int8
	}
	if a, err = expr.Cast(a, t); err != nil {
		return nil, nil, err
	}
	if b, err = expr.Cast(b, t); err != nil {
		return nil, nil, err
	}
	return a, b, nil
}

// withOuterValues is e with each outer reference replaced by the outer
// value it stands for.
func withOuterValues(e expr.Expr, refs []expr.Expr) expr.Expr {
	return substitute(e, func(x expr.Expr) (expr.Expr, bool) {
		if o, ok := x.(*expr.OuterRef); ok && o.N < len(refs) {
			return refs[o.N], true
		}
		return nil, false
	})
}

// substitute is a copy of e in which each sub-expression that with
// answers for is replaced by what it answers (which is not looked into
// again).
func substitute(e expr.Expr, with func(expr.Expr) (expr.Expr, bool)) expr.Expr {
	if r, ok := with(e); ok {
		return r
	}
	f, ok := e.(*expr.Func)
	if !ok {
		return e
	}
	c := *f
	c.Args = make([]expr.Expr, len(f.Args))
	for i, a := range f.Args {
		c.Args[i] = substitute(a, with)
	}
	return &c
}

func hasOuterRef(e expr.Expr) bool {
	found := false
	if e != nil {
		expr.Visit(e, func(x expr.Expr) {
			if _, ok := x.(*expr.OuterRef); ok {
				found = true
			}
		})
	}
	return found
}

// onlyOuter reports whether e refers to the outer row and to no column
// of its own.
func onlyOuter(e expr.Expr) bool {
	outer, local := false, false
	expr.Visit(e, func(x expr.Expr) {
		switch x.(type) {
		case *expr.OuterRef:
			outer = true
		case *expr.ColRef:
			local = true
		}
	})
	return outer && !local
}

// planHasOuterRef reports whether an expression of p (not of the
// subqueries nested in it, whose outer references are their own) refers
// to the outer row.
func planHasOuterRef(p plan.Node) bool {
	found := false
	MapPlan(p, func(e expr.Expr) (expr.Expr, error) {
		if hasOuterRef(e) {
			found = true
		}
		return e, nil
	}, nil)
	return found
}
