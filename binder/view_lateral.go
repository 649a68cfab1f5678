package binder

import (
	"streamdb/expr"
	"streamdb/plan"
	"streamdb/sqlerr"
	"streamdb/types"
)

// A LATERAL subquery of a materialized view that refers to the FROM
// items before it is decorrelated when the view is bound: its rows for
// every outer row at once, keyed by the correlation, joined with the
// outer rows on that key. With the correlation o.cust = c.id:
//
//   - WHERE o.cust = c.id makes o.cust a key column of the subquery's
//     rows (the join key c.id = o.cust);
//   - ORDER BY ... LIMIT n becomes a top-N partitioned by the keys (n per
//     outer value, exact under retraction as every top-N of a view);
//   - an aggregate is grouped by the keys as well; one without GROUP BY
//     is one row for every outer row, so it is left joined and an outer
//     row without a group reads what the aggregate gives over no rows (0
//     for count, NULL for the others);
//   - the select list may read the outer row: it is computed after the
//     join.
//
// LEFT JOIN LATERAL keeps the outer rows without a match, with NULL for
// every column of the subquery. Conditions other than inner = outer
// (o.amount > c.floor) are decorrelated over the domain of the outer
// values (overDomain). What cannot be taken apart this way (a
// correlation a NULL outer value may satisfy, ORDER BY or LIMIT over an
// outer column, an aggregate of outer columns) is refused with 0A000.

// decorrelateView rewrites the LATERAL subqueries and then the
// subqueries in expressions of a materialized view's plan.
func decorrelateView(root plan.Node) (plan.Node, error) {
	root, err := decorrelateViewLaterals(root)
	if err != nil {
		return nil, err
	}
	return decorrelateViewSubqueries(root)
}

// decorrelateViewLaterals replaces each lateral join of root (inner
// ones first) by a join of its outer rows with its subquery's rows
// keyed by the correlation. A lateral join over a set-returning
// function stays (checkStreamable refuses it).
func decorrelateViewLaterals(root plan.Node) (plan.Node, error) {
	return MapPlanNodes(root, nil, func(n plan.Node) (plan.Node, bool, error) {
		lj, ok := n.(*LateralJoin)
		if !ok {
			return n, false, nil
		}
		if _, srf := lj.Right.(*SRFNode); srf {
			return n, false, nil
		}
		left, err := decorrelateViewLaterals(lj.Left)
		if err != nil {
			return nil, true, err
		}
		right, err := decorrelateViewLaterals(lj.Right)
		if err != nil {
			return nil, true, err
		}
		l := *lj
		l.Left, l.Right = left, right
		out, err := joinLateral(&l)
		return out, true, err
	})
}

// lateralCore is a LATERAL subquery's rows for all outer rows at once:
// the rows for one outer row are node's rows whose key columns equal the
// outer values outer, read through sel.
type lateralCore struct {
	// node does not refer to the outer row.
	node plan.Node
	// sel are the subquery's columns, over node's row and the outer
	// references.
	sel []expr.Expr
	// keys are the positions in node of the correlation's inner values;
	// outer[i], over the outer references, equals column keys[i].
	keys  []int
	outer []expr.Expr
	// oneRow is set for an aggregate without GROUP BY grouped by the
	// keys: every outer row has one row, the aggregate over no rows
	// when node has no group for it; counts are the positions in node
	// of its count() columns, which read 0 then.
	oneRow bool
	counts []int
}

// refuseLateral is the 0A000 for what of a LATERAL subquery a view
// cannot run.
func refuseLateral(what string) error {
	return sqlerr.New(sqlerr.FeatureNotSupported, "%s in a LATERAL subquery is not supported in a materialized view", what).
		WithHint("Query it ad hoc, or correlate the subquery by inner = outer equalities in its WHERE.")
}

// lateralSplit takes a LATERAL subquery apart: outerRows are the rows
// of the FROM items before it, and its outer reference N stands for
// refs[N] over them.
type lateralSplit struct {
	outerRows plan.Node
	refs      []expr.Expr
}

// takeApartLateral rewrites n, a LATERAL subquery's plan (or part of
// it), into a lateralCore.
func (ls *lateralSplit) takeApartLateral(n plan.Node) (*lateralCore, error) {
	if !planHasOuterRef(n) {
		c := &lateralCore{node: n}
		for i := range n.Schema() {
			c.sel = append(c.sel, colRef(n, i))
		}
		return c, nil
	}
	switch n := n.(type) {
	case *plan.Project:
		c, err := ls.takeApartLateral(n.Input)
		if err != nil {
			return nil, err
		}
		c.sel = c.through(n.Exprs)
		return c, nil
	case *plan.Sort:
		// Rows of a subquery without LIMIT have no order.
		return ls.takeApartLateral(n.Input)
	case *plan.Filter:
		return ls.lateralFilter(n)
	case *plan.Join:
		return ls.lateralJoinInput(n)
	case *plan.Aggregate:
		return ls.lateralAggregate(n)
	case *plan.Limit:
		if hasOuterRef(n.CountExpr) || hasOuterRef(n.OffsetExpr) {
			return nil, sqlerr.New(sqlerr.FeatureNotSupported, "LIMIT or OFFSET that refers to the FROM items before a LATERAL subquery is not supported in a materialized view: each outer row would bound its top-N by its own value, so the view would have to keep every row of each group ranked").
				WithHint("Use a constant LIMIT in the view and filter by the outer column when you read it, or query it ad hoc.")
		}
		if err := checkConstantLimits(n); err != nil {
			return nil, err
		}
		return ls.lateralTopN(plan.LimitAsTopN(n))
	case *plan.TopN:
		return ls.lateralTopN(n)
	}
	return nil, refuseLateral("this form of subquery (" + n.Describe() + ")")
}

// through is es, over the row c.sel is the columns of, read over c.node's
// row and the outer references.
func (c *lateralCore) through(es []expr.Expr) []expr.Expr {
	out := make([]expr.Expr, len(es))
	for i, e := range es {
		if e == nil {
			continue
		}
		out[i] = substitute(e, func(x expr.Expr) (expr.Expr, bool) {
			if r, ok := x.(*expr.ColRef); ok && r.Idx < len(c.sel) {
				return c.sel[r.Idx], true
			}
			return nil, false
		})
	}
	return out
}

// keyRefs reads the key columns of c.node.
func (c *lateralCore) keyRefs() []expr.Expr {
	out := make([]expr.Expr, len(c.keys))
	for i, k := range c.keys {
		out[i] = colRef(c.node, k)
	}
	return out
}

// lateralFilter takes apart a WHERE (or HAVING): each condition
// inner = outer becomes a key, the others must not refer to the outer
// row.
func (ls *lateralSplit) lateralFilter(n *plan.Filter) (*lateralCore, error) {
	c, err := ls.takeApartLateral(n.Input)
	if err != nil {
		return nil, err
	}
	var keep, inner, outer, residual []expr.Expr
	for _, cond := range c.through(plan.Conjuncts(n.Cond)) {
		if !hasOuterRef(cond) {
			keep = append(keep, cond)
			continue
		}
		if c.oneRow {
			return nil, refuseLateral("HAVING that refers to the outer query over an aggregate without GROUP BY")
		}
		if HasSubquery(cond) {
			return nil, refuseLateral("a subquery that refers to the query around the LATERAL subquery")
		}
		i, o, ok, err := correlationKey(cond)
		if err != nil {
			return nil, err
		}
		if !ok {
			residual = append(residual, cond)
			continue
		}
		inner, outer = append(inner, i), append(outer, o)
	}
	if len(keep) > 0 {
		if c.oneRow {
			return nil, refuseLateral("HAVING over an aggregate without GROUP BY")
		}
		cond, err := conjoin(keep)
		if err != nil {
			return nil, err
		}
		c.node = &plan.Filter{Input: c.node, Cond: cond}
	}
	if len(residual) > 0 {
		return c, ls.overDomain(c, inner, outer, residual)
	}
	if len(inner) > 0 {
		base := len(c.node.Schema())
		c.addColumns(inner)
		for i := range inner {
			c.keys = append(c.keys, base+i)
		}
		c.outer = append(c.outer, outer...)
	}
	return c, nil
}

// overDomain ties c's rows to the outer row by a correlation with
// conditions other than equalities (view_domain.go has the method): D,
// the distinct outer values the correlation reads, is joined with c's
// rows on the equalities inner = outer as keys and the residual
// conditions as the join's filter, and D's columns become keys. A NULL
// outer value never joins back, so each outer column D holds must be
// read by a condition that is NULL when it is.
func (ls *lateralSplit) overDomain(c *lateralCore, inner, outer, residual []expr.Expr) error {
	var cols, keyOuter []expr.Expr // D's columns over the outer rows, and over the outer references
	for _, o := range outer {
		cols, keyOuter = append(cols, withOuterValues(o, ls.refs)), append(keyOuter, o)
	}
	at := map[int]int{} // outer reference -> its column of D
	for _, r := range residual {
		var bad error
		expr.Visit(r, func(x expr.Expr) {
			o, ok := x.(*expr.OuterRef)
			if !ok || o.N >= len(ls.refs) {
				return
			}
			if _, seen := at[o.N]; seen {
				return
			}
			strict := false
			for _, e := range append(append([]expr.Expr{}, outer...), residual...) {
				strict = strict || strictIn(e, o.N)
			}
			if !strict {
				name := o.Name
				if name == "" {
					name = ls.refs[o.N].String()
				}
				bad = refuseLateral("a correlation that a NULL in " + name + " may satisfy")
			}
			at[o.N] = len(cols)
			cols, keyOuter = append(cols, ls.refs[o.N]), append(keyOuter, o)
		})
		if bad != nil {
			return bad
		}
	}
	domain := groupBy(ls.outerRows, cols)
	nd, nf := len(cols), len(c.node.Schema())
	cond, err := domainJoinCondition(residual, domain, at)
	if err != nil {
		return err
	}
	j := &plan.Join{Kind: plan.InnerJoin, Left: domain, Right: c.node, LeftKeys: keyRefs(domain, len(inner)), RightKeys: inner,
		Cond: cond, Cols: append(append([]types.Column{}, domain.Cols...), c.node.Schema()...),
		Note: "Join of the distinct outer values with a LATERAL subquery's rows on its correlation"}
	// c's columns first, where sel and the keys read them.
	c.node = domainLast(j, j, nd, nf)
	for i := range nd {
		c.keys = append(c.keys, nf+i)
	}
	c.outer = append(c.outer, keyOuter...)
	return nil
}

// addColumns puts es (over c.node's row) to the right of c.node's
// columns.
func (c *lateralCore) addColumns(es []expr.Expr) {
	cols := c.node.Schema()
	exprs := make([]expr.Expr, 0, len(cols)+len(es))
	for i := range cols {
		exprs = append(exprs, colRef(c.node, i))
	}
	out := append([]types.Column{}, cols...)
	for i, e := range es {
		exprs = append(exprs, e)
		out = append(out, types.Column{Name: keyName(e, i), Type: e.Type()})
	}
	c.node = &plan.Project{Input: c.node, Exprs: exprs, Cols: out}
}

// lateralJoinInput takes apart an inner join in the subquery's FROM
// whose ON refers to the outer row: those conditions are WHERE
// conditions.
func (ls *lateralSplit) lateralJoinInput(n *plan.Join) (*lateralCore, error) {
	if n.Kind != plan.InnerJoin || planHasOuterRef(n.Left) || planHasOuterRef(n.Right) {
		return nil, refuseLateral("a correlation in an outer join or in a derived table")
	}
	var keep, outer []expr.Expr
	for _, c := range plan.Conjuncts(n.Cond) {
		if c == nil {
			continue
		}
		if hasOuterRef(c) {
			outer = append(outer, c)
		} else {
			keep = append(keep, c)
		}
	}
	for i, k := range n.LeftKeys {
		if hasOuterRef(k) || hasOuterRef(n.RightKeys[i]) {
			return nil, refuseLateral("a join key that refers to the outer query")
		}
	}
	j := *n
	var err error
	if j.Cond, err = conjoin(keep); err != nil {
		return nil, err
	}
	cond, err := conjoin(outer)
	if err != nil {
		return nil, err
	}
	return ls.lateralFilter(&plan.Filter{Input: &j, Cond: cond})
}

// lateralAggregate groups the subquery's aggregate by the keys too.
func (ls *lateralSplit) lateralAggregate(n *plan.Aggregate) (*lateralCore, error) {
	c, err := ls.takeApartLateral(n.Input)
	if err != nil {
		return nil, err
	}
	if c.oneRow {
		return nil, refuseLateral("an aggregate over an aggregate without GROUP BY")
	}
	if len(c.keys) == 0 {
		return nil, refuseLateral("an aggregate of outer columns")
	}
	group := c.through(n.GroupBy)
	aggs := make([]plan.AggCall, len(n.Aggs))
	for i, a := range n.Aggs {
		if a.Arg != nil {
			a.Arg = c.through([]expr.Expr{a.Arg})[0]
		}
		aggs[i] = a
	}
	for _, g := range group {
		if hasOuterRef(g) {
			return nil, refuseLateral("GROUP BY an outer column")
		}
	}
	for _, a := range aggs {
		if hasOuterRef(a.Arg) {
			return nil, refuseLateral("an aggregate of outer columns")
		}
	}
	ng := len(group)
	cols := append([]types.Column{}, n.Cols[:ng]...)
	for _, k := range c.keys {
		cols = append(cols, c.node.Schema()[k])
	}
	cols = append(cols, n.Cols[ng:]...)
	a := &plan.Aggregate{Input: c.node, GroupBy: append(group, c.keyRefs()...), Aggs: aggs, Cols: cols, UID: n.UID}
	out := &lateralCore{node: a, outer: c.outer, oneRow: ng == 0}
	for i := range ng {
		out.sel = append(out.sel, colRef(a, i))
	}
	for i := range c.keys {
		out.keys = append(out.keys, ng+i)
	}
	for i, agg := range aggs {
		at := ng + len(c.keys) + i
		out.sel = append(out.sel, colRef(a, at))
		if ng == 0 && agg.Func == "count" {
			out.counts = append(out.counts, at)
		}
	}
	return out, nil
}

// lateralTopN ranks within each outer value: the keys join the
// partition.
func (ls *lateralSplit) lateralTopN(t *plan.TopN) (*lateralCore, error) {
	c, err := ls.takeApartLateral(t.Input)
	if err != nil {
		return nil, err
	}
	if c.oneRow {
		return nil, refuseLateral("ORDER BY, LIMIT or a ranking over an aggregate without GROUP BY")
	}
	if len(c.keys) == 0 {
		return nil, refuseLateral("ORDER BY or a ranking of outer columns")
	}
	out := *t
	out.Input = c.node
	out.PartitionBy = append(c.through(t.PartitionBy), c.keyRefs()...)
	out.Order = make([]plan.SortKey, len(t.Order))
	for i, k := range t.Order {
		k.Expr = c.through([]expr.Expr{k.Expr})[0]
		out.Order[i] = k
	}
	for _, p := range out.PartitionBy {
		if hasOuterRef(p) {
			return nil, refuseLateral("PARTITION BY an outer column")
		}
	}
	for _, k := range out.Order {
		if hasOuterRef(k.Expr) {
			return nil, refuseLateral("ORDER BY an outer column")
		}
	}
	out.Cols = append([]types.Column{}, c.node.Schema()...)
	if t.HasRank() {
		out.Cols = append(out.Cols, t.Cols[t.RankCol()])
		c.sel = append(c.sel, colRef(&out, len(out.Cols)-1))
	}
	c.node = &out
	return c, nil
}

// joinLateral is lj, whose sides have no lateral joins left, as a join
// of its outer rows with its subquery's rows keyed by the correlation.
func joinLateral(lj *LateralJoin) (plan.Node, error) {
	ls := &lateralSplit{outerRows: lj.Left, refs: lj.Outer}
	c, err := ls.takeApartLateral(lj.Right)
	if err != nil {
		return nil, err
	}
	left := lj.Left.Schema()
	nl := len(left)
	kind := lj.Kind
	if c.oneRow {
		kind = plan.LeftJoin
	}
	// marker, when set, is a column of the subquery's rows that is NULL
	// only where a LEFT JOIN found none.
	marker := -1
	if kind == plan.LeftJoin && !c.oneRow {
		c.addColumns([]expr.Expr{&expr.Const{D: types.NewBool(true), T: types.Bool}})
		marker = nl + len(c.node.Schema()) - 1
	}
	lk := make([]expr.Expr, len(c.outer))
	for i, o := range c.outer {
		lk[i] = withOuterValues(o, lj.Outer)
	}
	rk := c.keyRefs()
	if len(lk) == 0 {
		one := &expr.Const{D: types.NewInt(1), T: types.Int4}
		lk, rk = []expr.Expr{one}, []expr.Expr{one}
	}
	join := &plan.Join{Kind: kind, Left: lj.Left, Right: c.node, LeftKeys: lk, RightKeys: rk,
		Cols: append(append([]types.Column{}, left...), c.node.Schema()...), Note: "LATERAL subquery joined on its correlation"}
	counts := map[int]bool{}
	for _, i := range c.counts {
		counts[i] = true
	}
	// sel over the joined row.
	sel := make([]expr.Expr, len(c.sel))
	for i, e := range c.sel {
		var werr error
		sel[i] = substitute(e, func(x expr.Expr) (expr.Expr, bool) {
			switch x := x.(type) {
			case *expr.OuterRef:
				if x.N < len(lj.Outer) {
					return lj.Outer[x.N], true
				}
			case *expr.ColRef:
				var v expr.Expr = colRef(join, nl+x.Idx)
				if counts[x.Idx] {
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
		if werr != nil {
			return nil, werr
		}
	}
	var cond expr.Expr
	if lj.Cond != nil {
		cond = substitute(lj.Cond, func(x expr.Expr) (expr.Expr, bool) {
			if r, ok := x.(*expr.ColRef); ok && r.Idx >= nl {
				return sel[r.Idx-nl], true
			}
			return nil, false
		})
	}
	if !c.oneRow {
		join.Cond = cond
		cond = nil
	}
	if marker >= 0 || (c.oneRow && cond != nil && lj.Kind == plan.LeftJoin) {
		// A LEFT JOIN's subquery columns are NULL where it matched
		// nothing (or, for one aggregate row, where ON is not true).
		when := cond
		if marker >= 0 {
			when = expr.IsNull(colRef(join, marker), true)
		}
		for i, e := range sel {
			if r, ok := e.(*expr.ColRef); ok && r.Idx >= nl && marker >= 0 {
				continue // NULL where the join found no row
			}
			if sel[i], err = expr.Case([]expr.Expr{when}, []expr.Expr{e}, nil); err != nil {
				return nil, err
			}
		}
		if c.oneRow {
			cond = nil
		}
	}
	exprs := make([]expr.Expr, 0, len(lj.Cols))
	for i := range left {
		exprs = append(exprs, colRef(join, i))
	}
	for i, e := range sel {
		t := lj.Cols[nl+i].Type
		if e.Type() != t {
			if e, err = expr.Cast(e, t); err != nil {
				return nil, err
			}
		}
		exprs = append(exprs, e)
	}
	var out plan.Node = &plan.Project{Input: join, Exprs: exprs, Cols: lj.Cols}
	if cond != nil {
		// An inner LATERAL over one aggregate row: ON filters the joined
		// rows, which are lj's columns.
		out = &plan.Filter{Input: out, Cond: lj.Cond}
	}
	return out, nil
}
