package sql

import (
	"time"

	"streamdb/binder"
	"streamdb/exec"
	"streamdb/expr"
	"streamdb/plan"
	"streamdb/types"
)

// A FROM (USING) list whose WHERE equates expressions of the target with
// expressions of the list (t.k = s.sk) is read once, at the first target
// row tested, over the statement's snapshot, and its rows are hashed by
// their side of the equalities: each target row then looks up the rows
// of its values, in the order the list's plan returned them, and takes
// the first for which the rest of the WHERE (the residual) holds. This
// is PostgreSQL's hash join of the target with the list; the list's rows
// are held in memory for the statement. Being read before the first
// change, the list never sees the statement's own changes, so such a
// statement streams inside a transaction block too.

// dmlJoinHash is the keys and the residual condition of a hashed join.
type dmlJoinHash struct {
	target []expr.Expr // over a target row
	list   []expr.Expr // over a row of the list, one type with target's
	// residual is the WHERE's conjuncts that read the list and are not
	// keys, and those that hold a subquery, over the target's row
	// followed by the list's (nil: none).
	residual expr.Expr
}

// hashDMLJoin is the hash join of list j with a target of ncols
// columns, or nil when its WHERE equates nothing of the target with the
// list or calls a volatile function (which the plan per row calls as
// PostgreSQL's nested loop would).
func hashDMLJoin(j *binder.DMLJoin, ncols int) *dmlJoinHash {
	if j.Where == nil || j.List == nil || expr.VolatileCall(j.Where) != "" {
		return nil
	}
	h := &dmlJoinHash{}
	var rest []expr.Expr
	for _, c := range plan.Conjuncts(j.Where) {
		sub := binder.HasSubquery(c)
		if !sub && readsBelow(c, ncols) {
			continue // tested first, on the target's row (targetOnlyWhere)
		}
		if !sub {
			if t, l, ok := plan.EquiKey(c, ncols); ok {
				h.target = append(h.target, t)
				h.list = append(h.list, l)
				continue
			}
		}
		rest = append(rest, c)
	}
	if len(h.target) == 0 {
		return nil
	}
	for _, c := range rest {
		if h.residual == nil {
			h.residual = c
			continue
		}
		and, err := expr.Binary("AND", h.residual, c)
		if err != nil {
			return nil
		}
		h.residual = and
	}
	return h
}

// bound is h's keys with the statement's parameter values vals and time
// stmtTime bound in (its residual is bound with the statement's other
// expressions).
func (h *dmlJoinHash) bound(vals []types.Datum, stmtTime time.Time) (*dmlJoinHash, error) {
	target, err := bindSets(h.target, vals, stmtTime)
	if err != nil {
		return nil, err
	}
	list, err := bindSets(h.list, vals, stmtTime)
	if err != nil {
		return nil, err
	}
	return &dmlJoinHash{target: target, list: list, residual: h.residual}, nil
}

// dmlJoinHashRun is one execution of a hashed join.
type dmlJoinHashRun struct {
	h     *dmlJoinHash
	list  plan.Node
	sub   *dmlSubqueries
	rows  map[string][]types.Row // by the list's keys; NULL keys left out
	built bool
	key   []byte
}

func (r *dmlJoinHashRun) first(row types.Row, residual expr.Expr) (types.Row, bool, error) {
	if !r.built {
		if err := r.build(); err != nil {
			return nil, false, err
		}
	}
	key, ok, err := appendJoinKey(r.key[:0], r.h.target, row)
	r.key = key
	if err != nil || !ok {
		return nil, false, err
	}
	for _, other := range r.rows[string(key)] {
		if residual == nil {
			return other, true, nil
		}
		if ok, err := expr.Holds(residual, joined(row, other)); err != nil || ok {
			return other, ok, err
		}
	}
	return nil, false, nil
}

// build reads the list and hashes its rows.
func (r *dmlJoinHashRun) build() error {
	rows, err := r.sub.x.runSub(r.list)
	if err != nil {
		return err
	}
	r.rows = make(map[string][]types.Row)
	var key []byte
	for _, row := range rows {
		var ok bool
		if key, ok, err = appendJoinKey(key[:0], r.h.list, row); err != nil {
			return err
		}
		if ok {
			r.rows[string(key)] = append(r.rows[string(key)], row)
		}
	}
	r.built = true
	return nil
}

// appendJoinKey appends the values of exprs over row to key; false when
// one is NULL (it equals nothing).
func appendJoinKey(key []byte, exprs []expr.Expr, row types.Row) ([]byte, bool, error) {
	for _, e := range exprs {
		v, err := e.Eval(row)
		if err != nil || v.IsNull() {
			return key, false, err
		}
		key = exec.AppendKey(key, v)
	}
	return key, true, nil
}
