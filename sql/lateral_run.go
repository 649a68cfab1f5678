package sql

import (
	"context"

	"streamdb/binder"
	"streamdb/exec"
	"streamdb/expr"
	"streamdb/plan"
	"streamdb/types"
)

// materializeLateral returns a copy of n in which each lateral join is
// replaced by a node that makes its rows as they are read (lateralRows):
// run executes a plan into rows, stream hands a plan's rows over one at a
// time. The left side is run whole; the right side runs once per
// distinct outer values of the left rows, or, when it is a set-returning
// function (a select list's SRFs), once per left row, streamed, so that
// SELECT generate_series(1, n) holds no series.
func materializeLateral(n plan.Node, run func(plan.Node) ([]types.Row, error), stream func(plan.Node, func(types.Row) error) error) (plan.Node, error) {
	return binder.MapPlanNodes(n, nil, func(x plan.Node) (plan.Node, bool, error) {
		l, ok := x.(*binder.LateralJoin)
		if !ok {
			return x, false, nil
		}
		return &lateralRows{LateralJoin: l, run: run, stream: stream}, true, nil
	})
}

// lateralRows is a lateral join run as the query reads it (exec.RowSource).
type lateralRows struct {
	*binder.LateralJoin
	run    func(plan.Node) ([]types.Row, error)
	stream func(plan.Node, func(types.Row) error) error
}

func (l *lateralRows) Children() []plan.Node { return nil }

func (l *lateralRows) EachRow(ctx context.Context, emit func(types.Row) error) error {
	left, err := l.run(l.Left)
	if err != nil {
		return err
	}
	_, srf := l.Right.(*binder.SRFNode)
	width := len(l.Right.Schema())
	memo := map[string][]types.Row{}
	for _, lrow := range left {
		vals := make([]types.Datum, len(l.Outer))
		var key []byte
		for i, e := range l.Outer {
			if vals[i], err = e.Eval(lrow); err != nil {
				return err
			}
			key = exec.AppendKey(key, vals[i])
		}
		matched := false
		joinRow := func(rrow types.Row) error {
			joined := append(append(make(types.Row, 0, len(lrow)+len(rrow)), lrow...), rrow...)
			holds, err := expr.Holds(l.Cond, joined)
			if err != nil || !holds {
				return err
			}
			matched = true
			return emit(joined)
		}
		p, _ := binder.MapPlan(l.Right, func(e expr.Expr) (expr.Expr, error) {
			if e == nil {
				return nil, nil
			}
			return expr.BindOuter(e, vals), nil
		}, nil)
		if srf {
			if err := l.stream(p, joinRow); err != nil {
				return err
			}
		} else {
			rrows, ok := memo[string(key)]
			if !ok {
				if rrows, err = l.run(p); err != nil {
					return err
				}
				memo[string(key)] = rrows
			}
			for _, rrow := range rrows {
				if err := joinRow(rrow); err != nil {
					return err
				}
			}
		}
		if !matched && l.Kind == plan.LeftJoin {
			joined := append(types.Row{}, lrow...)
			for range width {
				joined = append(joined, types.Null)
			}
			if err := emit(joined); err != nil {
				return err
			}
		}
	}
	return nil
}
