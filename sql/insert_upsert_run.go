package sql

import (
	"context"
	"strings"
	"time"

	"streamdb/binder"
	"streamdb/catalog"
	"streamdb/exec"
	"streamdb/expr"
	"streamdb/plan"
	"streamdb/sqlerr"
	"streamdb/types"
)

// insertIntoTableUpserting is insertIntoTable for ON CONFLICT DO UPDATE:
// it returns the rows written (inserted rows and the new versions of
// updated ones, in the order of the proposed rows), which the command tag
// counts and RETURNING answers. Like DO NOTHING it is computed at the
// commit of an autocommit statement and against the block's snapshot in a
// transaction block. There, an arbiter key taken by a commit the block's
// snapshot did not see is 40001 as under PostgreSQL's REPEATABLE READ:
// at the statement when its checks, which read the newest commits, find
// it (a UNIQUE constraint), else at COMMIT (txn.doNothingConflict).
//
// Subqueries in up run inside the write, over the statement's snapshot
// (vals and stmtTime are the statement's parameters and time).
func (s *session) insertIntoTableUpserting(ctx context.Context, d *catalog.Descriptor, rows []types.Row, up *upsert, vals []types.Datum, stmtTime time.Time) ([]types.Row, error) {
	var written []types.Row
	before := 0
	if s.tx != nil {
		before = len(s.tx.table(d).stmts)
	}
	err := s.changeTableFiltered(ctx, d, readsNothing, func([]types.Row) ([]exec.Change, error) {
		changes := make([]exec.Change, len(rows))
		for i, r := range rows {
			changes[i] = exec.Change{Row: r, Sign: exec.Insert}
		}
		return changes, nil
	}, func(ctx context.Context, ts *tableState, changes []exec.Change) ([]exec.Change, error) {
		up, done, err := up.withSubqueriesRun(ctx, vals, stmtTime)
		if err != nil {
			return nil, err
		}
		defer done()
		run, err := s.newUpsertRun(d, ts, up)
		if err != nil {
			return nil, err
		}
		out, err := run.resolve(ctx, changes)
		written = run.written
		return out, err
	})
	if err != nil {
		if name, ok := violatedKey(err); ok && s.tx != nil && up.arb[name] {
			return nil, snapshotConflict(err)
		}
		return nil, err
	}
	if s.tx != nil {
		w := s.tx.table(d)
		if before < len(w.stmts) && len(w.stmts[before]) > 0 {
			if s.tx.doNothing == nil {
				s.tx.doNothing = map[*exec.Change]doNothingStmt{}
			}
			s.tx.doNothing[&w.stmts[before][0]] = doNothingStmt{n: len(w.stmts[before]), arbiters: up.arb}
		}
	}
	return written, nil
}

// upsertRun resolves one statement's proposed rows against the table as
// the statement sees it (ts) and against the rows it writes itself.
type upsertRun struct {
	d   *catalog.Descriptor // as the statement's checks see it
	ts  *tableState
	up  *upsert
	gen []plan.GeneratedColumn
	// checks are the table's CHECK constraints, bound once per statement.
	checks *rowChecks
	keys   []uniqueKeyCols
	pos    [][]int // by key: the key's column positions
	// mine holds, by key, the encoded keys of the rows the statement
	// wrote (inserted or updated): a proposed row that conflicts with
	// one is 21000.
	mine []map[string]bool
	// replaced holds the identities (rowKey) of the table's rows the
	// statement updated: their old versions are gone for later rows.
	replaced map[string]bool
	written  []types.Row
}

func (s *session) newUpsertRun(d *catalog.Descriptor, ts *tableState, up *upsert) (*upsertRun, error) {
	gen, err := binder.BindGenerated(d, ts.cols)
	if err != nil {
		return nil, err
	}
	r := &upsertRun{d: s.e.current(ts.d), ts: ts, up: up, gen: gen, replaced: map[string]bool{}}
	r.checks = newRowChecks(r.d, ts.cols)
	for _, k := range uniqueKeys(r.d) {
		if !up.arb[k.name] {
			continue
		}
		pos := make([]int, len(k.cols))
		for j, name := range k.cols {
			pos[j] = columnIndex(ts.cols, name)
		}
		r.keys = append(r.keys, k)
		r.pos = append(r.pos, pos)
		r.mine = append(r.mine, map[string]bool{})
	}
	return r, nil
}

// resolve turns the proposed rows (inserts, generated columns filled in)
// into the statement's changes.
func (r *upsertRun) resolve(ctx context.Context, proposed []exec.Change) ([]exec.Change, error) {
	r.written = nil
	var out []exec.Change
	for _, ch := range proposed {
		// NOT NULL and CHECK hold for the proposed row before conflicts
		// are looked for, as in PostgreSQL.
		if err := checkNotNull(r.d, r.ts.cols, ch.Row); err != nil {
			return nil, err
		}
		if err := r.checks.check([]exec.Change{ch}); err != nil {
			return nil, err
		}
		old, err := r.conflicting(ctx, ch.Row)
		if err != nil {
			return nil, err
		}
		if old == nil {
			out = append(out, ch)
			r.wrote(ch.Row)
			continue
		}
		next, ok, err := r.updated(old, ch.Row)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		out = append(out, exec.Change{Row: old, Sign: exec.Delete}, exec.Change{Row: next, Sign: exec.Insert})
		r.replaced[string(rowKey(r.ts.key, old))] = true
		r.wrote(next)
	}
	return out, nil
}

// updated returns what the DO UPDATE makes of the table's row old for
// the proposed row (EXCLUDED), its generated columns recomputed; ok is
// false when the update's WHERE does not hold, and the row stays.
func (r *upsertRun) updated(old, proposed types.Row) (next types.Row, ok bool, err error) {
	both := append(append(make(types.Row, 0, 2*len(old)), old...), proposed...)
	if ok, err = expr.Holds(r.up.where, both); err != nil || !ok {
		return nil, false, err
	}
	next = append(types.Row(nil), old...)
	for i, e := range r.up.sets {
		if e == nil {
			continue
		}
		v, err := e.Eval(both)
		if err != nil {
			return nil, false, err
		}
		if next[i], err = expr.CastDatum(v, r.ts.cols[i].Type); err != nil {
			return nil, false, err
		}
	}
	if err := computeGenerated(r.gen, []exec.Change{{Row: next, Sign: exec.Insert}}); err != nil {
		return nil, false, err
	}
	return next, true, nil
}

// wrote notes a row the statement inserted or updated.
func (r *upsertRun) wrote(row types.Row) {
	for i := range r.keys {
		if k, ok := uniqueKey(r.pos[i], row); ok {
			r.mine[i][k] = true
		}
	}
	r.written = append(r.written, row)
}

// conflicting returns the row that holds one of row's arbiter keys (nil
// when none does); a row the statement wrote itself is 21000.
func (r *upsertRun) conflicting(ctx context.Context, row types.Row) (types.Row, error) {
	for i := range r.keys {
		k, ok := uniqueKey(r.pos[i], row)
		if !ok {
			continue // a NULL in the key conflicts with nothing
		}
		if r.mine[i][k] {
			return nil, sqlerr.New(sqlerr.CardinalityViolation, "ON CONFLICT DO UPDATE command cannot affect row a second time").
				WithHint("Ensure that no rows proposed for insertion within the same command have duplicate constrained values.")
		}
		old, err := r.holder(ctx, r.pos[i], row)
		if err != nil || old != nil {
			return old, err
		}
	}
	return nil, nil
}

// holder returns the table's row whose columns pos equal row's (none of
// them NULL), leaving out rows the statement replaced: a point read for
// the primary key, else through an index (a UNIQUE constraint's or a
// unique index's) or, in a block that spilled, a scan (ts.rowsWhere).
func (r *upsertRun) holder(ctx context.Context, pos []int, row types.Row) (types.Row, error) {
	ts := r.ts
	if ts.key != nil && samePositions(pos, ts.key) {
		id := rowKey(ts.key, row)
		if r.replaced[string(id)] {
			return nil, nil
		}
		return ts.Lookup(id)
	}
	var cond expr.Expr
	for _, p := range pos {
		eq, err := expr.Binary("=", &expr.ColRef{Idx: p, Name: ts.cols[p].Name, T: ts.cols[p].Type}, &expr.Const{D: row[p], T: ts.cols[p].Type})
		if err != nil {
			return nil, err
		}
		if cond == nil {
			cond = eq
		} else if cond, err = expr.Binary("AND", cond, eq); err != nil {
			return nil, err
		}
	}
	rows, err := ts.RowsWhere(ctx, cond)
	if err != nil {
		return nil, err
	}
	for _, cand := range rows {
		if ok, err := expr.Holds(cond, cand); err != nil || !ok {
			if err != nil {
				return nil, err
			}
			continue
		}
		if !r.replaced[string(rowKey(ts.key, cand))] {
			return cand, nil
		}
	}
	return nil, nil
}

// samePositions reports whether a and b hold the same column positions
// in any order.
func samePositions(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for _, x := range a {
		found := false
		for _, y := range b {
			found = found || x == y
		}
		if !found {
			return false
		}
	}
	return true
}

// snapshotConflict is the 40001 of an upsert in a transaction block whose
// arbiter key err (a 23505) says a commit after the block's snapshot took.
func snapshotConflict(err error) error {
	se := err.(*sqlerr.Error)
	out := sqlerr.New(sqlerr.SerializationFailure, "could not serialize access due to concurrent update").
		WithHint("Retry the transaction: INSERT ... ON CONFLICT DO UPDATE then sees the row and updates it.")
	out.Detail = strings.TrimSpace(se.Detail + " A transaction that committed after this one began inserted it.")
	return out
}
