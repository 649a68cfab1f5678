package sql

import (
	"context"
	"fmt"
	"time"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"streamdb/binder"
	"streamdb/catalog"
	"streamdb/exec"
	"streamdb/expr"
	"streamdb/pgwire"
	"streamdb/types"
)

// rowChange is a bound UPDATE or DELETE of a table, with or without a
// FROM (USING) list: prepareUpdate, prepareDelete, prepareUpdateFrom and
// prepareDeleteUsing bind it, and run executes it by whichever path the
// table and the WHERE allow: streamed outside a block (streamChange),
// streamed into a block (streamBlockChange), or over the rows the WHERE
// selects, read first (changeTable). Each path hands RETURNING the rows
// it changed once they are checked, inside the write, so that the
// RETURNING list's subqueries read what the statement's other
// subqueries read.
type rowChange struct {
	desc *catalog.Descriptor
	cols []types.Column
	verb string // "UPDATE" or "DELETE"
	// cond is the WHERE over the target's row (with a list: its
	// conjuncts that read only the target and hold no subquery).
	cond expr.Expr
	// sets are an UPDATE's assignments over the target's row, followed
	// by the list's (nil: the column is unchanged); nil for a DELETE.
	sets []expr.Expr
	ret  *returning
	join *dmlJoin // nil without a FROM (USING) list
	// reads is what the statement's subqueries and list read (nil:
	// nothing).
	reads *adHoc
}

// listReadWhole reports whether c's FROM (USING) list, if any, is read
// whole before the first change (hash-joined). A list planned per target
// row is left out of a block's streaming: its reads are not bounded to
// the block as it was before the statement, as subqueries' are
// (txn.streaming).
func (c *rowChange) listReadWhole() bool {
	return c.join == nil || c.join.hash != nil
}

// newRowChange completes c with what its subqueries and list read.
func (s *session) newRowChange(c *rowChange) *rowChange {
	exprs := append([]expr.Expr{c.cond}, c.sets...)
	exprs = append(exprs, c.ret.expressions()...)
	if c.join == nil {
		c.reads = s.subqueryReads(exprs)
		return c
	}
	c.reads = s.joinReads(c.join.j, exprs)
	return c
}

// bindReturning binds an UPDATE's or DELETE's RETURNING list over sc
// (the target's columns, then its list's), subqueries included.
func (s *session) bindReturning(fields []*ast.SelectField, sc *binder.Scope, params *binder.Params) (*returning, error) {
	return bindReturningOver(fields, sc, params, bindCatalog{s.e})
}

// prepared is c as a prepared statement.
func (c *rowChange) prepared(s *session, params *binder.Params) *prepared {
	return &prepared{params: params, cols: c.ret.columns(), run: func(ctx context.Context, vals []types.Datum, w pgwire.RowWriter) (string, error) {
		return c.run(ctx, s, vals, w)
	}}
}

// run executes c with parameter values vals, answering RETURNING's rows
// to w; it returns the command tag.
func (c *rowChange) run(ctx context.Context, s *session, vals []types.Datum, w pgwire.RowWriter) (string, error) {
	cond, err := bindOptional(c.cond, vals)
	if err != nil {
		return "", err
	}
	stmtTime := time.Now()
	sets, err := bindSets(c.sets, vals, stmtTime)
	if err != nil {
		return "", err
	}
	ret, err := c.ret.bound(vals, stmtTime)
	if err != nil {
		return "", err
	}
	sub, err := openDMLSubqueries(ctx, c.reads, vals, stmtTime)
	if err != nil {
		return "", err
	}
	defer sub.close()
	where := cond // what chooses the rows read
	if c.join == nil {
		if cond, where, err = sub.pinKeys(ctx, pkIndexes(c.desc, c.cols), cond); err != nil {
			return "", err
		}
	}
	// A WHERE that pins a few target rows reads the list per row (by its
	// keys where it has them), not whole.
	pinned := readsPinnedRows(s.e.withCurrentIndexesOf(c.desc), where)
	join, err := c.join.open(sub, vals, stmtTime, pinned)
	if err != nil {
		return "", err
	}
	rc := &rowChangeRun{ctx: ctx, c: c, sub: sub, cond: cond, join: join}
	// The subqueries of SET, RETURNING and the join's residual condition
	// resolve together, at the first row tested.
	residual, err := bindSets([]expr.Expr{c.join.residual()}, vals, stmtTime)
	if err != nil {
		return "", err
	}
	rc.exprs = append(append(append([]expr.Expr(nil), sets...), ret.expressions()...), residual...)
	rc.ret = ret
	returnBatch := func(batch []exec.Change) error {
		rows, err := rc.returned(batch)
		if err != nil {
			return err
		}
		return writeRows(w, rows)
	}
	var n int64
	switch {
	case c.streams(s, where):
		n, err = s.streamChange(ctx, c.desc, "the "+c.verb, rc.change, returnBatch)
	case c.listReadWhole() && s.streamsBlockChange(c.desc, where, c.sets): // table_stream_block.go
		n, err = s.streamBlockChange(ctx, c.desc, rc.change, returnBatch)
	default:
		var out []types.Row
		err = s.changeTable(ctx, c.desc, where, func(rows []types.Row) ([]exec.Change, error) {
			var changes []exec.Change
			n, rc.matched = 0, rc.matched[:0]
			for _, row := range rows {
				var ok bool
				var err error
				if changes, ok, err = rc.change(row, changes); err != nil {
					return nil, err
				}
				if ok {
					n++
				}
			}
			var err error
			out, err = rc.returnedBefore(changes)
			return changes, err
		})
		if err == nil {
			err = writeRows(w, out)
		}
	}
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%s %d", c.verb, n), nil
}

// streams reports whether c streams outside a block with where choosing
// its rows. RETURNING that reads the list pairs each changed row with its
// list row in the order they were changed, which a key move (whose new
// rows are published after every deletion) would not keep: such a
// statement reads its rows first.
func (c *rowChange) streams(s *session, where expr.Expr) bool {
	if c.join != nil && c.ret != nil && c.sets != nil && changesPrimaryKey(s.e.current(c.desc), c.sets) {
		return false
	}
	return s.streamsChange(c.desc, where, c.sets)
}

// rowChangeRun is one execution of a rowChange.
type rowChangeRun struct {
	ctx  context.Context
	c    *rowChange
	sub  *dmlSubqueries
	cond expr.Expr
	join dmlJoinFinder
	// exprs are the assignments, RETURNING's expressions and the join's
	// residual condition, bound to the statement's parameters; resolved
	// their subqueries resolved (at the first row tested).
	exprs, resolved []expr.Expr
	ret             *returning
	// matched are the list's rows that the rows changed since the last
	// batch joined, in order (with a list and RETURNING only).
	matched []types.Row
}

// change appends to out the changes of row when the statement changes
// it: its deletion, and an UPDATE's new row.
func (rc *rowChangeRun) change(row types.Row, out []exec.Change) ([]exec.Change, bool, error) {
	cond, resolved, err := rc.sub.resolve(rc.ctx, rc.cond, rc.exprs)
	if err != nil {
		return out, false, err
	}
	rc.resolved = resolved
	if ok, err := expr.Holds(cond, row); err != nil || !ok {
		return out, false, err
	}
	both := row
	if rc.join != nil {
		other, ok, err := rc.join.first(row, resolved[len(resolved)-1])
		if err != nil || !ok {
			return out, false, err
		}
		if rc.ret != nil {
			rc.matched = append(rc.matched, other)
		}
		both = joined(row, other)
	}
	out = append(out, exec.Change{Row: row, Sign: exec.Delete})
	if rc.c.sets == nil {
		return out, true, nil
	}
	next := append(types.Row(nil), row...)
	for i, e := range resolved[:len(rc.c.sets)] {
		if e == nil {
			continue
		}
		v, err := e.Eval(both)
		if err != nil {
			return out, false, err
		}
		if next[i], err = expr.CastDatum(v, rc.c.cols[i].Type); err != nil {
			return out, false, err
		}
	}
	return append(out, exec.Change{Row: next, Sign: exec.Insert}), true, nil
}

// returned is RETURNING's rows of a checked batch of changes, the rows
// change matched since the last batch.
func (rc *rowChangeRun) returned(batch []exec.Change) ([]types.Row, error) {
	if rc.ret == nil {
		return nil, nil
	}
	rows := rowsOf(batch)
	if rc.c.sets != nil {
		rows = insertedRows(batch)
	}
	if rc.join != nil {
		for i, row := range rows {
			rows[i] = joined(row, rc.matched[i])
		}
		rc.matched = rc.matched[:0]
	}
	ret := rc.ret.withExprs(rc.resolved[len(rc.c.sets) : len(rc.c.sets)+len(rc.ret.exprs)])
	return ret.eval(rows)
}

// returnedBefore is returned for the changes changeTable computes, whose
// checks fill in the generated columns after: they are filled in here
// first, for RETURNING.
func (rc *rowChangeRun) returnedBefore(changes []exec.Change) ([]types.Row, error) {
	if rc.ret == nil || len(changes) == 0 {
		return nil, nil
	}
	gen, err := binder.BindGenerated(rc.c.desc, rc.c.cols)
	if err != nil {
		return nil, err
	}
	if err := computeGenerated(gen, changes); err != nil {
		return nil, err
	}
	return rc.returned(changes)
}
