package exec

import (
	"context"

	"streamdb/expr"
	"streamdb/plan"
	"streamdb/storage/keyenc"
	"streamdb/types"
)

// joinKey encodes the key of row with appendKey (keyAppender), or
// ok=false when a key part is NULL (SQL equality never matches NULL).
func joinKey(keys []expr.Expr, row types.Row, buf []byte, appendKey func([]byte, types.Datum) []byte) ([]byte, bool, error) {
	buf = buf[:0]
	for _, k := range keys {
		v, err := k.Eval(row)
		if err != nil {
			return nil, false, err
		}
		if v.IsNull() {
			return buf, false, nil
		}
		buf = appendKey(buf, v)
	}
	return buf, true, nil
}

func concatRows(l, r types.Row) types.Row {
	out := make(types.Row, 0, len(l)+len(r))
	return append(append(out, l...), r...)
}

func nullRow(n int) types.Row { return make(types.Row, n) }

// joinMatches reports whether the joined row passes the residual condition.
func joinMatches(cond expr.Expr, row types.Row) (bool, error) { return expr.Holds(cond, row) }

// batchJoin is a hash join of two row sets; the rows it builds count
// against the query's memory budget.
func batchJoin(ctx context.Context, j *plan.Join, left, right []types.Row) ([]types.Row, error) {
	var out []types.Row
	err := eachJoinRow(ctx, j, left, right, true, func(row types.Row) error {
		out = append(out, row)
		return nil
	})
	return out, err
}

// eachJoinRow hash-joins two row sets and hands each joined row to emit.
// When hold is set the caller keeps the rows, and they are charged to the
// query's budget; either way the loop notices cancellation.
func eachJoinRow(ctx context.Context, j *plan.Join, left, right []types.Row, hold bool, emit func(types.Row) error) error {
	nl, nr := len(j.Left.Schema()), len(j.Right.Schema())
	// visited counts candidate pairs, and built the rows kept for the
	// caller, since the last budget check (charge), so that a join that
	// builds or tries many rows notices cancellation and its memory bound.
	visited, built := 0, 0
	check := func() error {
		visited = 0
		err := charge(ctx, built, nl+nr)
		built = 0
		return err
	}
	index := map[string][]int{}
	var buf []byte
	for i, r := range right {
		k, ok, err := joinKey(j.RightKeys, r, buf, keyenc.AppendCmp)
		if err != nil {
			return err
		}
		if ok {
			index[string(k)] = append(index[string(k)], i)
		}
	}
	rightMatched := make([]bool, len(right))
	for _, l := range left {
		k, ok, err := joinKey(j.LeftKeys, l, buf, keyenc.AppendCmp)
		if err != nil {
			return err
		}
		matched := false
		if ok {
			for _, ri := range index[string(k)] {
				if visited++; visited >= checkEvery {
					if err := check(); err != nil {
						return err
					}
				}
				row := concatRows(l, right[ri])
				pass, err := joinMatches(j.Cond, row)
				if err != nil {
					return err
				}
				if pass {
					if err := emit(row); err != nil {
						return err
					}
					if hold {
						built++
					}
					matched = true
					rightMatched[ri] = true
				}
			}
		}
		if !matched && (j.Kind == plan.LeftJoin || j.Kind == plan.FullJoin) {
			if err := emit(concatRows(l, nullRow(nr))); err != nil {
				return err
			}
		}
	}
	if j.Kind == plan.RightJoin || j.Kind == plan.FullJoin {
		for i, r := range right {
			if !rightMatched[i] {
				if err := emit(concatRows(nullRow(nl), r)); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
