package sql

import (
	"context"
	"time"

	"streamdb/binder"
	"streamdb/catalog"
	"streamdb/exec"
	"streamdb/types"
)

// Subqueries in INSERT's RETURNING, uncorrelated or correlated with the
// inserted row. As in PostgreSQL they read the snapshot the statement
// reads, without its own rows: committed state, or the transaction
// block's view of it before this statement. So they are evaluated inside
// the write, before its rows become visible: in changeTable's compute
// (under the table's lock and stateMu shared), in a streamed INSERT ...
// SELECT's batches before the commit applies, and for a stream before
// its messages are published. They run as UPDATE's do
// (update_subquery.go): uncorrelated ones once, at the first row,
// correlated ones once per distinct set of outer values.

// insertReturning is one execution of an INSERT's RETURNING list, its
// parameters and time bound; sub is nil when the list holds no subquery.
type insertReturning struct {
	ctx context.Context
	ret *returning
	sub *dmlSubqueries
}

// openInsertReturning readies ret (nil: none) for a statement with
// parameter values vals at time stmtTime. It waits for what the
// subqueries read, so it is called before the write's locks; close ends
// it.
func (s *session) openInsertReturning(ctx context.Context, ret *returning, vals []types.Datum, stmtTime time.Time) (*insertReturning, error) {
	bound, err := ret.bound(vals, stmtTime)
	if err != nil || bound == nil {
		return nil, err
	}
	r := &insertReturning{ctx: ctx, ret: bound}
	if !ret.hasSubqueries() {
		return r, nil
	}
	if r.sub, err = openDMLSubqueries(ctx, s.subqueryReads(bound.exprs), vals, stmtTime); err != nil {
		return nil, err
	}
	return r, nil
}

// readsState reports whether r's rows must be computed inside the write.
func (r *insertReturning) readsState() bool {
	return r != nil && r.sub != nil
}

// eval is the RETURNING rows of the inserted rows (none without a list).
// With subqueries, the caller holds stateMu shared, before the rows are
// visible.
func (r *insertReturning) eval(rows []types.Row) ([]types.Row, error) {
	if r == nil {
		return nil, nil
	}
	if r.sub == nil {
		return r.ret.eval(rows)
	}
	_, resolved, err := r.sub.resolve(r.ctx, nil, r.ret.exprs)
	if err != nil {
		return nil, err
	}
	return r.ret.withExprs(resolved).eval(rows)
}

// evalLocked is eval taking stateMu shared itself, for rows not yet
// written.
func (r *insertReturning) evalLocked(s *session, rows []types.Row) ([]types.Row, error) {
	if !r.readsState() {
		return r.eval(rows)
	}
	s.e.stateMu.RLock()
	defer s.e.stateMu.RUnlock()
	return r.eval(rows)
}

// returning is r's list, bound (nil without one).
func (r *insertReturning) returning() *returning {
	if r == nil {
		return nil
	}
	return r.ret
}

func (r *insertReturning) close() {
	if r != nil {
		r.sub.close()
	}
}

// hasSubqueries reports whether r's expressions hold a subquery.
func (r *returning) hasSubqueries() bool {
	if r == nil {
		return false
	}
	for _, e := range r.exprs {
		if binder.HasSubquery(e) {
			return true
		}
	}
	return false
}

// insertIntoTableReturning is insertIntoTable computing the RETURNING
// rows of ret inside the write, once the generated columns are filled in
// and before the rows are visible.
func (s *session) insertIntoTableReturning(ctx context.Context, d *catalog.Descriptor, rows []types.Row, ret *insertReturning) ([]types.Row, error) {
	var out []types.Row
	err := s.changeTableFiltered(ctx, d, readsNothing, func([]types.Row) ([]exec.Change, error) {
		changes := make([]exec.Change, len(rows))
		for i, r := range rows {
			changes[i] = exec.Change{Row: r, Sign: exec.Insert}
		}
		return changes, nil
	}, func(_ context.Context, _ *tableState, changes []exec.Change) ([]exec.Change, error) {
		var err error
		out, err = ret.eval(rowsOf(changes))
		return changes, err
	})
	return out, err
}
