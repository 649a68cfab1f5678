package binder

import (
	"fmt"

	"streamdb/expr"
	"streamdb/plan"
	"streamdb/types"
)

// quantified is x op ANY (sub) or x op ALL (sub) for an op other than
// the = ANY and <> ALL of IN and NOT IN, read from a join with min(y),
// max(y) and whether a y is NULL, per correlation key: one comparison
// with an extreme decides the comparisons with every y.
//
//	ANY: no rows -> false; x op e -> true; x or some y NULL -> NULL; else false
//	ALL: no rows -> true; NOT (x op e) -> false; x or some y NULL -> NULL; else true
//
// where e is the extreme that is easiest to satisfy for ANY (min for >
// and >=, max for < and <=) and hardest for ALL (the other one). For =
// ALL and <> ANY, "all y equal x" is x = min AND x = max. A NULL extreme
// (every y NULL) leaves the comparison NULL, which falls through to the
// NULL rule, as PostgreSQL's comparisons one by one would.
func (l *lifter) quantified(x expr.Expr, name string, sub *expr.Subquery, refs []expr.Expr) (expr.Expr, error) {
	op, all, _ := expr.QuantifiedOp(name)
	text := fmt.Sprintf("%s %s %s", x, name, sub)
	b, err := l.split(sub, refs, modeIn)
	if err != nil {
		return nil, err
	}
	x, y, err := sameKeyType(x, b.sel)
	if err != nil {
		return nil, err
	}
	empty, hasNull, at, err := l.nullCheck(b, y, "Subquery min, max and NULL check for "+text,
		plan.AggCall{Func: "min", Arg: y, T: y.Type()}, plan.AggCall{Func: "max", Arg: y, T: y.Type()})
	if err != nil {
		return nil, err
	}
	lo, hi := colRef(l.input, at), colRef(l.input, at+1)
	// decisive is the comparison that settles the answer: true for ANY,
	// false for ALL.
	var decisive expr.Expr
	switch {
	case op == "=" || op == "<>":
		// = ALL is false, and <> ANY true, when some y differs from x.
		if decisive, err = anyOf("<>", x, lo, hi); err != nil {
			return nil, err
		}
	default:
		e := lo
		if (op == ">" || op == ">=") == all {
			e = hi
		}
		if decisive, err = expr.Binary(op, x, e); err != nil {
			return nil, err
		}
		if all {
			if decisive, err = expr.Not(decisive); err != nil {
				return nil, err
			}
		}
	}
	unknown, err := expr.Binary("OR", expr.IsNull(x, false), hasNull)
	if err != nil {
		return nil, err
	}
	onEmpty, onDecisive := types.NewBool(all), types.NewBool(!all)
	null := &expr.Const{D: types.Null, T: types.Bool}
	return expr.Case([]expr.Expr{empty, decisive, unknown},
		[]expr.Expr{&expr.Const{D: onEmpty, T: types.Bool}, &expr.Const{D: onDecisive, T: types.Bool}, null},
		&expr.Const{D: onEmpty, T: types.Bool})
}

// anyOf is (x op a) OR (x op b).
func anyOf(op string, x, a, b expr.Expr) (expr.Expr, error) {
	l, err := expr.Binary(op, x, a)
	if err != nil {
		return nil, err
	}
	r, err := expr.Binary(op, x, b)
	if err != nil {
		return nil, err
	}
	return expr.Binary("OR", l, r)
}
