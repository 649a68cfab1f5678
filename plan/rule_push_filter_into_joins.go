package plan

import (
	"streamdb/expr"
	"streamdb/types"
)

// pushFilterIntoJoinsRule turns a WHERE over inner joins into join keys,
// filters of one input and residual conditions.
var pushFilterIntoJoinsRule = WhereRule{Name: "push_filter_into_joins", Apply: pushFilterIntoJoins}

// pushFilterIntoJoins moves the conjuncts of a WHERE filter that sits on an
// inner join into the join: an equality between an expression over the left
// input and one over the right becomes a join key, a conjunct over one
// input only filters that input (and is pushed further into joins below
// it), and the rest become the join's residual condition. So `FROM a, b
// WHERE a.id = b.id` runs as a keyed hash join rather than a cross join
// whose state grows with the product of its inputs. Outer joins are left as
// they are: moving a WHERE into them would change which rows are padded.
func pushFilterIntoJoins(f *Filter) Node {
	j, ok := f.Input.(*Join)
	if !ok || j.Kind != InnerJoin {
		return f
	}
	nl := len(j.Left.Schema())
	out := *j
	out.LeftKeys = append([]expr.Expr(nil), j.LeftKeys...)
	out.RightKeys = append([]expr.Expr(nil), j.RightKeys...)
	var left, right, above []expr.Expr
	for _, c := range Conjuncts(f.Cond) {
		lo, hi, any := colRange(c)
		switch {
		case !any:
			above = append(above, c) // constant: keep as it was
		case hi < nl:
			left = append(left, c)
		case lo >= nl:
			right = append(right, shiftCols(c, -nl))
		default:
			if lk, rk, ok := EquiKey(c, nl); ok {
				out.LeftKeys = append(out.LeftKeys, lk)
				out.RightKeys = append(out.RightKeys, rk)
				continue
			}
			out.Cond = andAll(out.Cond, c)
		}
	}
	if len(left) > 0 {
		out.Left = pushFilterIntoJoins(&Filter{Input: j.Left, Cond: andAll(nil, left...)})
	}
	if len(right) > 0 {
		out.Right = pushFilterIntoJoins(&Filter{Input: j.Right, Cond: andAll(nil, right...)})
	}
	if len(above) > 0 {
		return &Filter{Input: &out, Cond: andAll(nil, above...)}
	}
	return &out
}

// EquiKey splits l = r, with l over the first nl columns and r over the
// rest (or the other way round), into key expressions of one type.
func EquiKey(c expr.Expr, nl int) (expr.Expr, expr.Expr, bool) {
	f, ok := c.(*expr.Func)
	if !ok || f.Name != "=" || len(f.Args) != 2 {
		return nil, nil, false
	}
	a, b := f.Args[0], f.Args[1]
	alo, ahi, aok := colRange(a)
	blo, bhi, bok := colRange(b)
	if !aok || !bok {
		return nil, nil, false
	}
	switch {
	case ahi < nl && blo >= nl:
	case bhi < nl && alo >= nl:
		a, b = b, a
	default:
		return nil, nil, false
	}
	at, bt := a.Type(), b.Type()
	switch {
	case at.IsInteger() && bt.IsInteger():
		// Keys of mixed integer widths must encode alike.
		var err1, err2 error
		a, err1 = expr.Cast(a, types.Int8)
		b, err2 = expr.Cast(b, types.Int8)
		if err1 != nil || err2 != nil {
			return nil, nil, false
		}
	case at != bt:
		return nil, nil, false
	}
	return a, shiftCols(b, -nl), true
}

// Conjuncts returns the operands of e's top-level ANDs (e itself if it is
// not an AND).
func Conjuncts(e expr.Expr) []expr.Expr {
	if f, ok := e.(*expr.Func); ok && f.Name == "AND" && len(f.Args) == 2 {
		return append(Conjuncts(f.Args[0]), Conjuncts(f.Args[1])...)
	}
	return []expr.Expr{e}
}

func andAll(acc expr.Expr, es ...expr.Expr) expr.Expr {
	for _, e := range es {
		if acc == nil {
			acc = e
			continue
		}
		and, err := expr.Binary("AND", acc, e)
		if err != nil {
			panic("plan: AND of boolean conditions: " + err.Error())
		}
		acc = and
	}
	return acc
}

// colRange returns the lowest and highest column e refers to, and whether
// it refers to any.
func colRange(e expr.Expr) (lo, hi int, any bool) {
	expr.Visit(e, func(x expr.Expr) {
		if c, ok := x.(*expr.ColRef); ok {
			if !any || c.Idx < lo {
				lo = c.Idx
			}
			if !any || c.Idx > hi {
				hi = c.Idx
			}
			any = true
		}
	})
	return lo, hi, any
}

func shiftCols(e expr.Expr, by int) expr.Expr {
	return expr.Walk(expr.Clone(e), func(x expr.Expr) expr.Expr {
		if c, ok := x.(*expr.ColRef); ok {
			n := *c
			n.Idx += by
			return &n
		}
		return x
	})
}
