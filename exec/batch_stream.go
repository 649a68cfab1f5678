package exec

import (
	"context"

	"streamdb/plan"
	"streamdb/storage"
	"streamdb/types"
)

// streamRows hands the rows of n to emit one at a time, without holding
// them, where n is a join under filters and projections: an aggregate
// over a join (SELECT count(*) FROM a CROSS JOIN b) then holds its
// groups and the join's inputs, not the join's output. ok is false for
// other plans, which RunBatch builds whole.
func streamRows(ctx context.Context, n plan.Node, r storage.Reader, emit func(types.Row) error) (ok bool, err error) {
	switch n := n.(type) {
	case *plan.Join:
		left, err := RunBatch(ctx, n.Left, r)
		if err != nil {
			return true, err
		}
		right, err := RunBatch(ctx, n.Right, r)
		if err != nil {
			return true, err
		}
		return true, eachJoinRow(ctx, n, left, right, false, emit)
	case *plan.Filter:
		// An input streamRows does not handle returns ok=false before
		// reading anything, so the caller builds this node whole.
		return streamRows(ctx, n.Input, r, func(row types.Row) error {
			v, err := n.Cond.Eval(row)
			if err != nil || v.IsNull() || !v.Bool() {
				return err
			}
			return emit(row)
		})
	case *plan.Project:
		return streamRows(ctx, n.Input, r, func(row types.Row) error {
			out, err := evalRow(n.Exprs, row)
			if err != nil {
				return err
			}
			return emit(out)
		})
	}
	return false, nil
}
