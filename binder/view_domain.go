package binder

import (
	"fmt"
	"strings"

	"streamdb/expr"
	"streamdb/plan"
	"streamdb/sqlerr"
	"streamdb/types"
)

// A correlated subquery whose WHERE ties its rows to the outer row by
// more than equalities (x.b < t.b, or s.k = t.k AND s.ts > t.ts) is
// decorrelated over the domain of its outer values, as in Neumann and
// Kemper's unnesting of arbitrary queries:
//
//  1. D is the distinct outer values the correlation reads: the outer
//     side of each equality, then each outer column the other conditions
//     read (a GROUP BY of the outer rows, without aggregates).
//  2. D is joined with the subquery's rows on the whole correlation: the
//     equalities are the join's keys, the other conditions its filter,
//     evaluated per pair. Without an equality the join has no key and
//     pairs every row of D with every subquery row: its work and state
//     grow with the product of the two (EXPLAIN says "Nested Loop").
//  3. The joined rows are the subquery's rows for each row of D, which
//     the subquery's shapes (view_subquery.go) then group by D's columns
//     and join back to the outer rows on them, as they do with the keys
//     of an equality-only correlation.
//
// A subquery nested in the subquery's WHERE that refers to the outer row
// (two levels out) is such a condition too: once the subquery's rows are
// joined with D, the outer values it reads are columns of the joined row,
// and the nested subquery is decorrelated against that row as any
// subquery of a WHERE is (view_subquery.go).
//
// A select list of IN, or aggregate arguments, that read the outer row
// read D's columns in the joined rows instead, so such a subquery goes
// over D too, even when its WHERE correlates by equalities only.
//
// A NULL outer value never joins back on a plain key, so its outer rows
// read the subquery over no rows. That is PostgreSQL's answer when a
// NULL there makes the WHERE fail for every subquery row: the column is
// read by a condition that is NULL when it is (strict), or by a nested
// EXISTS or op ANY subquery that has no rows when it is. Any other
// column of D (t.b IS NULL OR x.b < t.b, or one read in the select list)
// joins back null-safe: on the keys "c IS NULL" and "COALESCE(c, '0')",
// a constant of its type, so a NULL finds the group of D's NULL; a type
// without such a constant is refused.

// split is splitSubquery, with a correlation that has conditions other
// than equalities, or values that read the outer row, rewritten over the
// domain of l's outer values.
func (l *lifter) split(sub *expr.Subquery, refs []expr.Expr, mode subqueryMode) (*subqueryBody, error) {
	b, err := splitSubquery(sub, refs, mode)
	if err != nil || (len(b.residual) == 0 && !b.readsOuter()) {
		return b, err
	}
	return b, l.overDomain(b, sub, refs)
}

// overDomain replaces b's rows by their join with the domain of the
// outer values (see above): b.from becomes the subquery's rows followed
// by the domain's columns, b.inner those columns and b.outer the outer
// values they are of, and b's select list or aggregate arguments read
// the domain's columns where they read the outer row.
func (l *lifter) overDomain(b *subqueryBody, sub *expr.Subquery, refs []expr.Expr) error {
	var cols []expr.Expr // the domain's columns, over the outer row
	for _, o := range b.outerKeys {
		cols = append(cols, withOuterValues(o, refs))
	}
	at := map[int]int{} // outer reference -> its column of the domain
	var order []int     // the outer references of at, in the order read
	collect := func(e expr.Expr) {
		expr.Visit(e, func(x expr.Expr) {
			if o, ok := x.(*expr.OuterRef); ok {
				if _, seen := at[o.N]; !seen && o.N < len(refs) {
					at[o.N] = len(cols)
					order = append(order, o.N)
					cols = append(cols, refs[o.N])
				}
			}
		})
	}
	var texts []string
	for _, c := range b.residual {
		texts = append(texts, conditionText(c))
		collect(c)
	}
	for _, v := range b.values() {
		collect(*v)
	}
	// A domain column no condition rejects a NULL of joins back null-safe.
	nullSafe := make([]bool, len(cols))
	for _, n := range order {
		if rejectsNull(b, n) {
			continue
		}
		if _, ok := standIn(refs[n].Type()); !ok {
			return sqlerr.New(sqlerr.FeatureNotSupported,
				"a correlated subquery in a materialized view must compare each outer column of type %s it reads with an operator that is NULL for a NULL operand (=, <, <=, >, >=, <> and arithmetic), or read it in a nested EXISTS or IN subquery that does; in %s, %s may match subquery rows while it is NULL", refs[n].Type(), sub, refs[n]).
				WithHint("Query it ad hoc, or test the outer column for NULL outside the subquery.")
		}
		nullSafe[at[n]] = true
	}
	domain := groupBy(l.base, cols)
	nd, from := len(cols), b.from
	nf := len(from.Schema())
	cond, err := domainJoinCondition(b.residual, domain, at)
	if err != nil {
		return err
	}
	what := "correlated subquery " + strings.Join(texts, " AND ")
	if len(texts) == 0 {
		what = "correlated subquery whose values read the outer row"
	}
	note := "Nested Loop Join (no key: every distinct outer value is paired with every subquery row) for " + what
	if len(b.inner) > 0 {
		note = "Join of the distinct outer values on the equalities, for " + what
		if len(texts) > 0 {
			note = fmt.Sprintf("Join of the distinct outer values on the equalities, filtered by %s, for correlated subquery", strings.Join(texts, " AND "))
		}
	}
	j := &plan.Join{Kind: plan.InnerJoin, Left: domain, Right: from, LeftKeys: keyRefs(domain, len(b.inner)), RightKeys: b.inner,
		Cond: cond, Cols: append(append([]types.Column{}, domain.Cols...), from.Schema()...), Note: note}
	// The nested subqueries of cond now refer to j's row only: they
	// become joins above j, which keep j's columns where they are.
	joined, err := decorrelateViewSubqueries(j)
	if err != nil {
		return err
	}
	// from's columns first, where the subquery's select list and
	// aggregates read them.
	p := domainLast(joined, j, nd, nf)
	for _, v := range b.values() {
		*v = substitute(*v, func(x expr.Expr) (expr.Expr, bool) {
			if o, ok := x.(*expr.OuterRef); ok {
				if i, ok := at[o.N]; ok {
					return colRef(p, nf+i), true
				}
			}
			return nil, false
		})
	}
	b.from, b.inner, b.outer = p, nil, nil
	for i, c := range cols {
		in := colRef(p, nf+i)
		if !nullSafe[i] {
			b.inner, b.outer = append(b.inner, in), append(b.outer, c)
			continue
		}
		ki, _ := nullSafeKeys(in)
		ko, _ := nullSafeKeys(c)
		b.inner, b.outer = append(b.inner, ki...), append(b.outer, ko...)
	}
	b.residual, b.outerKeys = nil, nil
	return nil
}

// values are the expressions of b, over from's row, that give the
// subquery's values: its IN select list, or its aggregate's arguments
// (the aggregate is copied first, as b's plan is the subquery's).
func (b *subqueryBody) values() []*expr.Expr {
	if b.agg == nil {
		if b.sel == nil {
			return nil
		}
		return []*expr.Expr{&b.sel}
	}
	a := *b.agg
	a.Aggs = append([]plan.AggCall{}, b.agg.Aggs...)
	b.agg = &a
	var out []*expr.Expr
	for i := range a.Aggs {
		if a.Aggs[i].Arg != nil {
			out = append(out, &a.Aggs[i].Arg)
		}
	}
	return out
}

// nullSafeKeys are join keys on e that pair a NULL with a NULL, as one
// key e would not: e IS NULL, and e with NULL replaced by a constant of
// its type. ok is false when there is no constant of e's type at hand.
func nullSafeKeys(e expr.Expr) ([]expr.Expr, bool) {
	stand, ok := standIn(e.Type())
	if !ok {
		return nil, false
	}
	c, err := expr.Coalesce([]expr.Expr{e, stand})
	if err != nil {
		return nil, false
	}
	return []expr.Expr{expr.IsNull(e, false), c}, true
}

// standIn is a constant of type t: the first of standInTexts that reads
// as a t.
func standIn(t types.Type) (expr.Expr, bool) {
	for _, text := range standInTexts {
		if d, err := expr.CastDatum(types.NewString(text), t); err == nil && !d.IsNull() {
			return &expr.Const{D: d, T: t}, true
		}
	}
	return nil, false
}

// standInTexts are texts of which one reads as a value of most types:
// numbers, strings, booleans, jsonb and intervals; dates and times;
// uuids.
var standInTexts = []string{"0", "2000-01-01 00:00:00", "00:00:00", "00000000-0000-0000-0000-000000000000"}

// conditionText is c as EXPLAIN shows it, its nested subqueries as
// their SQL.
func conditionText(c expr.Expr) string {
	return substitute(c, func(x expr.Expr) (expr.Expr, bool) {
		if sub, _, ok := expr.SubqueryOf(x); ok {
			return sub, true
		}
		return nil, false
	}).String()
}

// rejectsNull reports whether a NULL in outer reference n makes b's
// correlation fail for every subquery row: one of its conditions is
// strict in n.
func rejectsNull(b *subqueryBody, n int) bool {
	for _, o := range b.outerKeys {
		if strictIn(o, n) {
			return true
		}
	}
	for _, c := range b.residual {
		if nullRejecting(c, n) {
			return true
		}
	}
	return false
}

// nullRejecting reports whether c, a condition of a WHERE, is false or
// NULL whenever outer reference n is NULL: c is strict in n, or c is
// EXISTS or x op ANY (IN) of a subquery (false over no rows) that has no
// rows while an outer value of its own that is strict in n is NULL.
func nullRejecting(c expr.Expr, n int) bool {
	if strictIn(c, n) {
		return true
	}
	sub, refs, ok := expr.SubqueryOf(c)
	if !ok || sub.Kind != expr.SubqueryExists {
		f, isFunc := c.(*expr.Func)
		if !isFunc || len(f.Args) != 2 {
			return false
		}
		if _, all, quantified := expr.QuantifiedOp(f.Name); !quantified || all {
			return false
		}
		if sub, refs, ok = expr.SubqueryOf(f.Args[1]); !ok {
			return false
		}
	}
	p, ok := sub.Plan.(plan.Node)
	if !ok {
		return false
	}
	for m, r := range refs {
		if strictIn(r, n) && noRowsWhileNull(p, m) {
			return true
		}
	}
	return false
}

// noRowsWhileNull reports whether p, a subquery's plan, gives no rows
// while its outer reference m is NULL: a condition of a filter or inner
// join that every row passes through is null-rejecting in m.
func noRowsWhileNull(p plan.Node, m int) bool {
	switch n := p.(type) {
	case *plan.Project:
		return noRowsWhileNull(n.Input, m)
	case *plan.Sort:
		return noRowsWhileNull(n.Input, m)
	case *plan.Limit:
		return noRowsWhileNull(n.Input, m)
	case *plan.Filter:
		for _, c := range plan.Conjuncts(n.Cond) {
			if nullRejecting(c, m) {
				return true
			}
		}
		return noRowsWhileNull(n.Input, m)
	case *plan.Join:
		switch n.Kind {
		case plan.InnerJoin:
			if n.Cond != nil {
				for _, c := range plan.Conjuncts(n.Cond) {
					if nullRejecting(c, m) {
						return true
					}
				}
			}
			return noRowsWhileNull(n.Left, m) || noRowsWhileNull(n.Right, m)
		case plan.LeftJoin:
			return noRowsWhileNull(n.Left, m)
		case plan.RightJoin:
			return noRowsWhileNull(n.Right, m)
		}
	}
	return false
}

// strictIn reports whether e is NULL whenever outer reference n is: n
// itself, or an operator that is NULL for a NULL operand over such an
// expression.
func strictIn(e expr.Expr, n int) bool {
	switch e := e.(type) {
	case *expr.OuterRef:
		return e.N == n
	case *expr.Func:
		if !strictOps[e.Name] && !strings.HasPrefix(e.Name, "CAST") {
			return false
		}
		for _, a := range e.Args {
			if strictIn(a, n) {
				return true
			}
		}
	}
	return false
}

// strictOps are the operators that are NULL when an operand is.
var strictOps = map[string]bool{
	"=": true, "<>": true, "!=": true, "<": true, "<=": true, ">": true, ">=": true,
	"+": true, "-": true, "*": true, "/": true, "%": true, "NOT": true, "LIKE": true, "ILIKE": true,
}

// domainJoinCondition is the AND of conds, which read a subquery's rows
// and the outer row, rewritten over the join of domain (its columns
// first) with those rows: a column moves past domain's columns, and an
// outer reference that at maps reads that column of domain.
func domainJoinCondition(conds []expr.Expr, domain plan.Node, at map[int]int) (expr.Expr, error) {
	nd := len(domain.Schema())
	over := make([]expr.Expr, len(conds))
	for i, c := range conds {
		over[i] = substitute(c, func(x expr.Expr) (expr.Expr, bool) {
			switch x := x.(type) {
			case *expr.ColRef:
				s := *x
				s.Idx += nd
				return &s, true
			case *expr.OuterRef:
				if d, ok := at[x.N]; ok {
					return colRef(domain, d), true
				}
			}
			return nil, false
		})
	}
	return conjoin(over)
}

// domainLast projects input, whose first columns are j's (nd columns of
// the outer values' domain, then nf of the subquery's rows), to the
// subquery's columns first and the domain's after them.
func domainLast(input plan.Node, j *plan.Join, nd, nf int) *plan.Project {
	p := &plan.Project{Input: input}
	for i := range nf {
		p.Exprs = append(p.Exprs, colRef(j, nd+i))
	}
	for i := range nd {
		p.Exprs = append(p.Exprs, colRef(j, i))
	}
	for _, e := range p.Exprs {
		c := e.(*expr.ColRef)
		p.Cols = append(p.Cols, types.Column{Name: c.Name, Type: c.T})
	}
	return p
}
