package exec

import (
	"context"
	"errors"

	"streamdb/catalog"
	"streamdb/plan"
	"streamdb/sqlerr"
	"streamdb/storage"
	"streamdb/types"
)

// StreamBatch evaluates n as RunBatch does, in the same order, handing
// each result row to emit as it is made instead of returning them all.
// Scans of tables and views read a Pebble iterator, and filters,
// projections, LIMIT, UNION ALL, tumbling windows, joins' outputs and
// aggregates pass rows on (or fold them) one at a time, so a query built
// of these holds no more than its groups, a join's inputs and one row of
// each scan. A LIMIT stops its input's scan once it has its rows. Other
// operators (sorts, window functions, top-Ns, ...) hold their input, as
// they must, and emit their result from it. emit may keep the rows it is
// given; an error from it ends the evaluation with that error.
func StreamBatch(ctx context.Context, n plan.Node, r storage.Reader, emit func(types.Row) error) error {
	if err := ctx.Err(); err != nil {
		return sqlerr.New(sqlerr.QueryCanceled, "canceling statement due to user request")
	}
	switch n := n.(type) {
	case RowSource:
		return n.EachRow(ctx, emit)
	case *plan.Scan:
		return streamScan(ctx, n, r, emit)
	case *plan.Filter:
		rows, ok, err := lookupByKey(n, r)
		if !ok {
			rows, ok, err = lookupByIndex(n, r)
		}
		if ok {
			if err != nil {
				return err
			}
			return emitAll(rows, emit)
		}
		return StreamBatch(ctx, n.Input, r, func(row types.Row) error {
			v, err := n.Cond.Eval(row)
			if err != nil || v.IsNull() || !v.Bool() {
				return err
			}
			return emit(row)
		})
	case *plan.Project:
		return StreamBatch(ctx, n.Input, r, func(row types.Row) error {
			out, err := evalRow(n.Exprs, row)
			if err != nil {
				return err
			}
			return emit(out)
		})
	case *plan.Window:
		return StreamBatch(ctx, n.Input, r, func(row types.Row) error {
			rows, err := windowRows(n, row)
			if err != nil {
				return err
			}
			return emitAll(rows, emit)
		})
	case *plan.Union:
		for _, in := range n.Inputs {
			if err := StreamBatch(ctx, in, r, emit); err != nil {
				return err
			}
		}
		return nil
	case *plan.Join:
		left, err := RunBatch(ctx, n.Left, r)
		if err != nil {
			return err
		}
		right, err := RunBatch(ctx, n.Right, r)
		if err != nil {
			return err
		}
		return eachJoinRow(ctx, n, left, right, false, emit)
	case *plan.Aggregate:
		agg := newBatchAggregator(n)
		if err := StreamBatch(ctx, n.Input, r, agg.add); err != nil {
			return err
		}
		return emitAll(agg.result(), emit)
	case *plan.Limit:
		if !n.WithTies {
			return streamLimit(ctx, n, r, emit)
		}
	}
	rows, err := RunBatch(ctx, n, r)
	if err != nil {
		return err
	}
	return emitAll(rows, emit)
}

// RowSource is a plan node that makes its rows itself as the query runs
// (sql's set-returning functions, whose arguments are known only then),
// one at a time, without holding them.
type RowSource interface {
	plan.Node
	EachRow(ctx context.Context, emit func(types.Row) error) error
}

// collectBatch is RunBatch of a plan StreamBatch streams. Rows that come
// from a join are charged to the query's memory budget as they are kept
// (a join's output is what can grow past its inputs; RunBatch of a join
// charges the same way, batchJoin).
func collectBatch(ctx context.Context, n plan.Node, r storage.Reader) ([]types.Row, error) {
	var out []types.Row
	charged := !joinFed(n)
	width := len(n.Schema())
	err := StreamBatch(ctx, n, r, func(row types.Row) error {
		out = append(out, row)
		if !charged && len(out)%checkEvery == 0 {
			return charge(ctx, checkEvery, width)
		}
		return nil
	})
	if err == nil && !charged {
		err = charge(ctx, len(out)%checkEvery, width)
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// joinFed reports whether the rows of n are a join's output passed on
// row by row (through filters, projections, windows, LIMIT or UNION ALL).
func joinFed(n plan.Node) bool {
	switch n := n.(type) {
	case *plan.Join:
		return true
	case *plan.Filter:
		return joinFed(n.Input)
	case *plan.Project:
		return joinFed(n.Input)
	case *plan.Window:
		return joinFed(n.Input)
	case *plan.Limit:
		return joinFed(n.Input)
	case *plan.Union:
		for _, in := range n.Inputs {
			if joinFed(in) {
				return true
			}
		}
	}
	return false
}

func emitAll(rows []types.Row, emit func(types.Row) error) error {
	for _, row := range rows {
		if err := emit(row); err != nil {
			return err
		}
	}
	return nil
}

// limitReached ends the input of one LIMIT: each LIMIT makes its own, so
// that a LIMIT below another does not take the outer one's stop for its
// own.
type limitReached struct{}

func (*limitReached) Error() string { return "the LIMIT has its rows" }

// streamLimit passes on the rows of n's input past its OFFSET, up to its
// count, and stops reading the input there.
func streamLimit(ctx context.Context, n *plan.Limit, r storage.Reader, emit func(types.Row) error) error {
	if n.CountExpr != nil || n.OffsetExpr != nil {
		return sqlerr.New(sqlerr.InternalError, "LIMIT or OFFSET was not evaluated before the query ran")
	}
	if n.Count == 0 {
		return nil
	}
	stop := &limitReached{}
	skip, left := n.Offset, n.Count
	err := StreamBatch(ctx, n.Input, r, func(row types.Row) error {
		if skip > 0 {
			skip--
			return nil
		}
		if err := emit(row); err != nil {
			return err
		}
		if left > 0 {
			if left--; left == 0 {
				return stop
			}
		}
		return nil
	})
	var reached *limitReached
	if errors.As(err, &reached) && reached == stop {
		return nil
	}
	return err
}

// streamScan hands over the rows of a scanned table or view from an
// iterator over its state in r, each as many times as it is stored.
func streamScan(ctx context.Context, s *plan.Scan, r storage.Reader, emit func(types.Row) error) error {
	if s.Each != nil {
		return s.Each(ctx, emit)
	}
	if s.Rows != nil {
		return emitAll(s.Rows(), emit)
	}
	if s.Object.Kind != catalog.KindView && s.Object.Kind != catalog.KindTable {
		return sqlerr.New(sqlerr.FeatureNotSupported, "cannot query %s %s directly", s.Object.Kind, s.Object.Name).
			WithHint("Create a materialized view over it and query the view.")
	}
	n := 0
	return storage.ScanPrefix(r, ViewTablePrefix(s.Object.ID), func(_, v []byte) error {
		if n++; n%4096 == 0 && ctx.Err() != nil {
			return sqlerr.New(sqlerr.QueryCanceled, "canceling statement due to user request")
		}
		row, count, err := DecodeViewValue(v, len(s.Cols))
		if err != nil {
			return err
		}
		for range count {
			if err := emit(row); err != nil {
				return err
			}
		}
		return nil
	})
}
