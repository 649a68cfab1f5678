package sql

import (
	"context"
	"time"

	"streamdb/expr"
	"streamdb/plan"
	"streamdb/types"
)

// Subqueries in ON CONFLICT DO UPDATE's SET and WHERE. They bind as a
// query's subqueries do, over the existing row and EXCLUDED as the outer
// query, and run inside the write (under the table's lock and stateMu
// shared, as an ad-hoc query runs), over the snapshot the statement reads:
// committed state, or the transaction block's view of it before this
// statement, so a subquery that reads the target table does not see the
// statement's own rows, as in PostgreSQL. An uncorrelated subquery runs
// once per statement; a correlated one once per distinct set of outer
// values (correlatedCall).

// subqueryReads is the ad-hoc read of the subqueries in exprs (nil
// entries allowed), nil when they have none.
func (s *session) subqueryReads(exprs []expr.Expr) *adHoc {
	return s.readsOf(nil, exprs)
}

// readsOf is what plans (each with its subqueries) and the subqueries of
// exprs read (nil: nothing).
func (s *session) readsOf(all []plan.Node, exprs []expr.Expr) *adHoc {
	var plans []plan.Node
	for _, e := range exprs {
		if e == nil {
			continue
		}
		expr.Visit(e, func(x expr.Expr) {
			if sq, ok := x.(*expr.Subquery); ok {
				plans = append(plans, sq.Plan.(plan.Node))
			}
		})
	}
	if len(plans) == 0 && len(all) == 0 {
		return nil
	}
	for _, p := range plans {
		all = append(all, withSubqueries(p)...)
	}
	// reads stands for the sources only: its inputs' schemas differ, and
	// it is never run.
	reads := &plan.Union{Inputs: all}
	s.e.markStoredKeys(reads)
	return &adHoc{s: s, reads: reads}
}

// withSubqueriesRun returns up with its subqueries replaced by their
// results (run now) or by calls that run them per row, and the function
// that ends their execution once the statement's rows are resolved. The
// caller holds stateMu shared.
func (up *upsert) withSubqueriesRun(ctx context.Context, vals []types.Datum, stmtTime time.Time) (*upsert, func(), error) {
	if up.subqueries == nil {
		return up, func() {}, nil
	}
	x, err := up.subqueries.open(ctx, vals, stmtTime)
	if err != nil {
		return nil, nil, err
	}
	out := &upsert{arb: up.arb, sets: make([]expr.Expr, len(up.sets))}
	if out.where, err = resolveExprSubqueries(up.where, x.runSub); err != nil {
		x.close()
		return nil, nil, err
	}
	for i, e := range up.sets {
		if out.sets[i], err = resolveExprSubqueries(e, x.runSub); err != nil {
			x.close()
			return nil, nil, err
		}
	}
	return out, x.close, nil
}
