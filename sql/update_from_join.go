package sql

import (
	"time"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"streamdb/binder"
	"streamdb/exec"
	"streamdb/expr"
	"streamdb/plan"
	"streamdb/types"
)

// UPDATE ... FROM and DELETE ... USING join the target with a list of
// FROM items. The target's rows are read as the other UPDATE and DELETE
// paths read them (by key, index or scan, chosen by the WHERE's
// conjuncts that read only the target), and for each one the list's rows
// that join it are found by running the list's plan with the target's
// values (binder.DMLJoin), inside the write over the statement's
// snapshot, as a correlated subquery runs (update_subquery.go). The first
// row found is the one the target row joins: each target row is updated
// or deleted at most once, as in PostgreSQL (which picks an arbitrary
// matching row; streamdb picks the first its plan returns).

// splitDMLJoin splits the TableRefs of a statement front marked DMLJoin
// into the target (its first table) and the FROM (USING) list. The AST is
// copied where it changes: a prepared statement binds it again.
func splitDMLJoin(refs *ast.TableRefsClause) (*ast.TableRefsClause, ast.ResultSetNode, bool) {
	if refs == nil || refs.TableRefs == nil {
		return nil, nil, false
	}
	// The comma list is left-deep: the target is the leftmost table, a
	// TableSource or a join of it alone, and the join above it adds the
	// first item of the list.
	var spine []*ast.Join
	for j := refs.TableRefs; ; {
		spine = append(spine, j)
		left, ok := j.Left.(*ast.Join)
		if !ok || aloneTable(left) != nil {
			break
		}
		j = left
	}
	bottom := spine[len(spine)-1]
	target := aloneTable(bottom.Left)
	if target == nil || bottom.Right == nil || bottom.On != nil || bottom.Using != nil || bottom.NaturalJoin {
		return nil, nil, false
	}
	var from ast.ResultSetNode = bottom.Right
	for i := len(spine) - 2; i >= 0; i-- {
		j := *spine[i]
		j.Left = from
		from = &j
	}
	return &ast.TableRefsClause{TableRefs: &ast.Join{Left: target}}, from, true
}

// aloneTable is n when it is one table, or the table a join of one table
// alone holds; nil otherwise.
func aloneTable(n ast.ResultSetNode) *ast.TableSource {
	switch n := n.(type) {
	case *ast.TableSource:
		return n
	case *ast.Join:
		if n.Right == nil {
			return aloneTable(n.Left)
		}
	}
	return nil
}

// targetOnlyWhere is the conjuncts of cond (bound over the target's
// ncols columns followed by the list's) that read only the target and
// hold no subquery, over the target's row; nil when there are none.
func targetOnlyWhere(cond expr.Expr, ncols int) expr.Expr {
	var out expr.Expr
	for _, c := range plan.Conjuncts(cond) {
		if binder.HasSubquery(c) || !readsBelow(c, ncols) {
			continue
		}
		if out == nil {
			out = c
			continue
		}
		and, err := expr.Binary("AND", out, c)
		if err != nil {
			return nil
		}
		out = and
	}
	return out
}

// readsBelow reports whether every column e reads is one of the first n.
func readsBelow(e expr.Expr, n int) bool {
	ok := true
	expr.Visit(e, func(x expr.Expr) {
		if c, isCol := x.(*expr.ColRef); isCol && c.Idx >= n {
			ok = false
		}
	})
	return ok
}

// joinReads is what a statement with join j and expressions exprs reads:
// the list's plan and the subqueries' plans.
func (s *session) joinReads(j *binder.DMLJoin, exprs []expr.Expr) *adHoc {
	return s.readsOf(withSubqueries(j.Plan), exprs)
}

// dmlJoin is a bound FROM (USING) list and how it is joined: by a hash
// of the list (dmlJoinHash) when the WHERE equates the target with the
// list, else by running the list's plan per target row.
type dmlJoin struct {
	j    *binder.DMLJoin
	hash *dmlJoinHash // nil: the plan per target row
}

// newDMLJoin is the join of list j with a target of ncols columns.
func newDMLJoin(j *binder.DMLJoin, ncols int) *dmlJoin {
	return &dmlJoin{j: j, hash: hashDMLJoin(j, ncols)}
}

// dmlJoinFinder finds, for one target row at a time, the first row of
// the list that joins it; residual is the resolved residual condition
// of a hash join (nil for the plan per row). The caller holds stateMu
// shared, inside the write, after the statement's subqueries resolved.
type dmlJoinFinder interface {
	first(row types.Row, residual expr.Expr) (types.Row, bool, error)
}

// open readies one execution of the join with the statement's
// subqueries, parameter values vals and time stmtTime (nil when d is
// nil); perRow runs the list's plan per target row even when it could
// be hashed.
func (d *dmlJoin) open(sub *dmlSubqueries, vals []types.Datum, stmtTime time.Time, perRow bool) (dmlJoinFinder, error) {
	switch {
	case d == nil:
		return nil, nil
	case d.hash != nil && !perRow:
		h, err := d.hash.bound(vals, stmtTime)
		if err != nil {
			return nil, err
		}
		return &dmlJoinHashRun{h: h, list: d.j.List, sub: sub}, nil
	}
	return &dmlJoinRun{j: d.j, sub: sub}, nil
}

// residual is the condition a hash join tests on the joined row (nil:
// none, or no hash join).
func (d *dmlJoin) residual() expr.Expr {
	if d == nil || d.hash == nil {
		return nil
	}
	return d.hash.residual
}

// dmlJoinRun runs the list's plan with each target row's values.
// Consecutive rows with the same values for what the list reads of the
// target reuse the last answer.
type dmlJoinRun struct {
	j    *binder.DMLJoin
	sub  *dmlSubqueries
	key  []byte
	last types.Row
	ok   bool
	ran  bool
}

func (r *dmlJoinRun) first(row types.Row, _ expr.Expr) (types.Row, bool, error) {
	vals := make([]types.Datum, len(r.j.Refs))
	var key []byte
	for i, e := range r.j.Refs {
		v, err := e.Eval(row)
		if err != nil {
			return nil, false, err
		}
		vals[i] = v
		key = exec.AppendKey(key, v)
	}
	if r.ran && string(key) == string(r.key) {
		return r.last, r.ok, nil
	}
	p, err := binder.MapPlan(r.j.Plan, func(e expr.Expr) (expr.Expr, error) {
		if e == nil {
			return nil, nil
		}
		return expr.BindOuter(e, vals), nil
	}, nil)
	if err != nil {
		return nil, false, err
	}
	rows, err := r.sub.x.runSub(p)
	if err != nil {
		return nil, false, err
	}
	r.key, r.ran, r.last, r.ok = key, true, nil, len(rows) > 0
	if r.ok {
		r.last = rows[0]
	}
	return r.last, r.ok, nil
}

// joined is row followed by the list's row other.
func joined(row, other types.Row) types.Row {
	out := make(types.Row, 0, len(row)+len(other))
	return append(append(out, row...), other...)
}
