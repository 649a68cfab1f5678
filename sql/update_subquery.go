package sql

import (
	"context"
	"time"

	"streamdb/binder"
	"streamdb/expr"
	"streamdb/plan"
	"streamdb/types"
)

// Subqueries in an UPDATE's SET and WHERE and in a DELETE's WHERE:
// uncorrelated, or correlated with the target row. They bind as a query's
// subqueries do, over the target row as the outer query, and run inside
// the write (under the table's lock and stateMu shared, as an ad-hoc
// query runs, and as ON CONFLICT DO UPDATE's do: insert_upsert_subquery.go)
// over the snapshot the statement reads: committed state, or the
// transaction block's view of it before this statement, so a subquery
// that reads the target table does not see the statement's own changes,
// as in PostgreSQL. They are run when the first row is tested, so a
// statement that finds no row runs none of them (PostgreSQL evaluates
// them on demand too). The rows the statement reads are chosen by the
// WHERE's conditions without subqueries (subqueryFreeWhere), so one that
// pins the primary key still reads only those rows.

// allowSubqueries lets the expressions bound with params hold subqueries
// until the returned function is called (the RETURNING list, bound
// after, takes none).
func (s *session) allowSubqueries(params *binder.Params) (restore func()) {
	return params.SubqueriesIn(bindCatalog{s.e})
}

// subqueryFreeWhere is cond without its conjuncts that hold a subquery
// (nil when none is left): it holds for every row cond holds for, and is
// what chooses the rows a statement reads (by key, index or scan).
func subqueryFreeWhere(cond expr.Expr) expr.Expr {
	if cond == nil || !binder.HasSubquery(cond) {
		return cond
	}
	var out expr.Expr
	for _, c := range plan.Conjuncts(cond) {
		if binder.HasSubquery(c) {
			continue
		}
		if out == nil {
			out = c
			continue
		}
		and, err := expr.Binary("AND", out, c)
		if err != nil {
			return nil // read every row; cond itself decides
		}
		out = and
	}
	return out
}

// dmlSubqueries is one execution of the subqueries of an UPDATE or
// DELETE (nil when it has none): resolve replaces them in the statement's
// condition and assignments by their results, or by calls that run them
// per distinct outer values, running them at its first call.
type dmlSubqueries struct {
	reads    *adHoc
	vals     []types.Datum
	stmtTime time.Time

	x              *adHocExec // opened by the first resolve
	cond           expr.Expr
	sets           []expr.Expr
	resolveFailure error
}

// openDMLSubqueries readies the subqueries that reads stands for (nil:
// none) for a statement with parameter values vals at time stmtTime. It
// waits for what they read, so it is called before the write's locks.
func openDMLSubqueries(ctx context.Context, reads *adHoc, vals []types.Datum, stmtTime time.Time) (*dmlSubqueries, error) {
	if reads == nil {
		return nil, nil
	}
	if err := reads.ready(ctx); err != nil {
		return nil, err
	}
	return &dmlSubqueries{reads: reads, vals: vals, stmtTime: stmtTime}, nil
}

// resolve returns cond and sets with their subqueries resolved (as they
// are when d is nil). The caller holds stateMu shared, inside the write.
func (d *dmlSubqueries) resolve(ctx context.Context, cond expr.Expr, sets []expr.Expr) (expr.Expr, []expr.Expr, error) {
	if d == nil {
		return cond, sets, nil
	}
	if d.x != nil || d.resolveFailure != nil {
		return d.cond, d.sets, d.resolveFailure
	}
	d.resolveFailure = d.open(ctx, cond, sets)
	return d.cond, d.sets, d.resolveFailure
}

func (d *dmlSubqueries) open(ctx context.Context, cond expr.Expr, sets []expr.Expr) error {
	x, err := d.reads.open(ctx, d.vals, d.stmtTime)
	if err != nil {
		return err
	}
	d.x = x
	if d.cond, err = resolveExprSubqueries(cond, x.runSub); err != nil {
		return err
	}
	d.sets = make([]expr.Expr, len(sets))
	for i, e := range sets {
		if d.sets[i], err = resolveExprSubqueries(e, x.runSub); err != nil {
			return err
		}
	}
	return nil
}

// close ends the subqueries' execution, once the statement's rows are
// resolved.
func (d *dmlSubqueries) close() {
	if d != nil && d.x != nil {
		d.x.close()
	}
}

// maxSubqueryKeys is the most values of an IN subquery that pinKeys looks
// up by key; with more, the table is read and each row tested.
const maxSubqueryKeys = 1024

// pinKeys lets a WHERE whose conjunct `k IN (SELECT ...)` names the
// table's one-column primary key k (key, by column position), with an
// uncorrelated subquery, read only the rows of the keys the subquery
// returns: it runs that subquery now (after ready, before the write's
// locks, over the statement's snapshot as the others) and returns cond
// with the conjunct resolved from its rows, and the condition that
// chooses the rows the statement reads. Without such a conjunct (or with
// d nil) it returns cond and its subquery-free conjuncts.
func (d *dmlSubqueries) pinKeys(ctx context.Context, key []int, cond expr.Expr) (expr.Expr, expr.Expr, error) {
	free := subqueryFreeWhere(cond)
	if d == nil || len(key) != 1 {
		return cond, free, nil
	}
	for _, c := range plan.Conjuncts(cond) {
		f, ok := c.(*expr.Func)
		if !ok || f.Name != expr.InSubquery || len(f.Args) != 2 {
			continue
		}
		if col, ok := f.Args[0].(*expr.ColRef); !ok || col.Idx != key[0] {
			continue
		}
		sq, outer, ok := expr.SubqueryOf(f.Args[1])
		if !ok || len(outer) > 0 {
			continue
		}
		rows, err := d.runNow(ctx, sq.Plan.(plan.Node))
		if err != nil {
			return nil, nil, err
		}
		resolved, err := expr.ResolveQuantified(f.Name, f.Args[0], sq.T, rows)
		if err != nil {
			return nil, nil, err
		}
		cond = replaceConjunct(cond, c, resolved)
		if len(rows) > maxSubqueryKeys {
			return cond, free, nil
		}
		in, err := expr.ResolveIn(f.Args[0], sq.T, rows, false)
		if err != nil {
			return nil, nil, err
		}
		if free == nil {
			return cond, in, nil
		}
		where, err := expr.Binary("AND", free, in)
		if err != nil {
			return cond, free, nil
		}
		return cond, where, nil
	}
	return cond, free, nil
}

// runNow runs one uncorrelated subquery's plan over the statement's
// snapshot, outside the write.
func (d *dmlSubqueries) runNow(ctx context.Context, p plan.Node) ([]types.Row, error) {
	e := d.reads.s.e
	e.stateMu.RLock()
	defer e.stateMu.RUnlock()
	x, err := d.reads.open(ctx, d.vals, d.stmtTime)
	if err != nil {
		return nil, err
	}
	defer x.close()
	return x.runSub(p)
}

// replaceConjunct returns cond with its conjunct old (by identity)
// replaced by with.
func replaceConjunct(cond, old, with expr.Expr) expr.Expr {
	var out expr.Expr
	for _, c := range plan.Conjuncts(cond) {
		if c == old {
			c = with
		}
		if out == nil {
			out = c
			continue
		}
		and, err := expr.Binary("AND", out, c)
		if err != nil {
			return cond
		}
		out = and
	}
	return out
}
