package sql

import (
	"streamdb/expr"
	"streamdb/plan"
	"streamdb/storage/keyenc"
	"streamdb/types"
)

// materializeLateral returns a copy of n in which each lateral join is
// replaced by its rows (a Values node): run executes a plan. The right
// side runs once per distinct outer values of the left rows.
func materializeLateral(n plan.Node, run func(plan.Node) ([]types.Row, error)) (plan.Node, error) {
	return mapPlanNodes(n, nil, func(x plan.Node) (plan.Node, bool, error) {
		l, ok := x.(*lateralJoin)
		if !ok {
			return x, false, nil
		}
		rows, err := runLateral(l, run)
		if err != nil {
			return nil, true, err
		}
		return valuesOf(rows, l.Cols), true, nil
	})
}

func runLateral(l *lateralJoin, run func(plan.Node) ([]types.Row, error)) ([]types.Row, error) {
	left, err := run(l.Left)
	if err != nil {
		return nil, err
	}
	width := len(l.Right.Schema())
	memo := map[string][]types.Row{}
	var out []types.Row
	for _, lrow := range left {
		vals := make([]types.Datum, len(l.Outer))
		var key []byte
		for i, e := range l.Outer {
			if vals[i], err = e.Eval(lrow); err != nil {
				return nil, err
			}
			key = keyenc.Append(key, vals[i])
		}
		rrows, ok := memo[string(key)]
		if !ok {
			p, _ := mapPlan(l.Right, func(e expr.Expr) (expr.Expr, error) {
				if e == nil {
					return nil, nil
				}
				return expr.BindOuter(e, vals), nil
			}, nil)
			if rrows, err = run(p); err != nil {
				return nil, err
			}
			memo[string(key)] = rrows
		}
		matched := false
		for _, rrow := range rrows {
			joined := append(append(types.Row{}, lrow...), rrow...)
			holds, err := expr.Holds(l.Cond, joined)
			if err != nil {
				return nil, err
			}
			if holds {
				matched = true
				out = append(out, joined)
			}
		}
		if !matched && l.Kind == plan.LeftJoin {
			joined := append(types.Row{}, lrow...)
			for range width {
				joined = append(joined, types.Null)
			}
			out = append(out, joined)
		}
	}
	return out, nil
}
