package sql

import (
	"context"
	"fmt"
	"time"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"streamdb/binder"
	"streamdb/exec"
	"streamdb/expr"
	"streamdb/front"
	"streamdb/pgwire"
	"streamdb/sqlerr"
	"streamdb/types"
)

// prepareUpdateFrom prepares UPDATE t SET ... FROM list WHERE ...: SET,
// WHERE and RETURNING read the target's columns and the list's; each
// target row that joins a row of the list is updated once, from the
// first such row (update_from_join.go).
func (s *session) prepareUpdateFrom(n *ast.UpdateStmt, params *binder.Params) (*prepared, error) {
	if err := refuseOrderLimit("UPDATE", n.Order, n.Limit); err != nil {
		return nil, err
	}
	targetRefs, from, ok := splitDMLJoin(n.TableRefs)
	if !ok {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "this form of UPDATE ... FROM is not supported").
			WithHint("Name the table to update first: UPDATE t SET ... FROM other WHERE ...")
	}
	desc, alias, err := s.tableTarget(targetRefs, "UPDATE", params)
	if err != nil {
		return nil, err
	}
	cols, sc, err := tableScope(desc, alias)
	if err != nil {
		return nil, err
	}
	restore := s.allowSubqueries(params) // update_subquery.go
	defer restore()
	j, err := binder.BindDMLJoin(bindCatalog{s.e}, params, from, n.Where, sc)
	if err != nil {
		return nil, err
	}
	b := binder.NewExprBinder(params)
	sets := make([]expr.Expr, len(cols)) // nil: column unchanged
	for _, a := range n.List {
		idx := columnIndex(cols, a.Column.Name.O)
		if idx < 0 {
			return nil, sqlerr.New(sqlerr.UndefinedColumn, "column %q of relation %q does not exist", a.Column.Name.O, desc.Name).
				WithPosition(params.Statement().IdentPosition(a.Column.Name.O))
		}
		if err := s.bindAssignment(b, j.Scope, desc, cols, sets, idx, a, params); err != nil {
			return nil, err
		}
	}
	restore()
	cond := targetOnlyWhere(j.Where, len(cols))
	reads := s.joinReads(j, append([]expr.Expr{cond}, sets...))
	ret, err := bindReturningIn(params.Statement().Returning, j.Scope, params)
	if err != nil {
		return nil, err
	}
	return &prepared{params: params, cols: ret.columns(), run: func(ctx context.Context, vals []types.Datum, w pgwire.RowWriter) (string, error) {
		cond, err := bindOptional(cond, vals)
		if err != nil {
			return "", err
		}
		stmtTime := time.Now()
		bound, err := bindSets(sets, vals, stmtTime)
		if err != nil {
			return "", err
		}
		sub, err := openDMLSubqueries(ctx, reads, vals, stmtTime)
		if err != nil {
			return "", err
		}
		defer sub.close()
		join := &dmlJoinRun{j: j, sub: sub}
		var matched []types.Row // the list's rows, for RETURNING
		// update appends the changes that replace row (when it joins a
		// row of the list) to out.
		update := func(row types.Row, out []exec.Change) ([]exec.Change, bool, error) {
			cond, bound, err := sub.resolve(ctx, cond, bound)
			if err != nil {
				return out, false, err
			}
			if ok, err := expr.Holds(cond, row); err != nil || !ok {
				return out, false, err
			}
			other, ok, err := join.first(row)
			if err != nil || !ok {
				return out, false, err
			}
			both := joined(row, other)
			next := append(types.Row(nil), row...)
			for i, e := range bound {
				if e == nil {
					continue
				}
				v, err := e.Eval(both)
				if err != nil {
					return out, false, err
				}
				if next[i], err = expr.CastDatum(v, cols[i].Type); err != nil {
					return out, false, err
				}
			}
			if ret != nil {
				matched = append(matched, other)
			}
			return append(out, exec.Change{Row: row, Sign: exec.Delete}, exec.Change{Row: next, Sign: exec.Insert}), true, nil
		}
		if ret == nil && s.streamsChange(desc, cond, sets) {
			n, err := s.streamChange(ctx, desc, "the UPDATE", update, func([]exec.Change) error { return nil })
			if err != nil {
				return "", err
			}
			return fmt.Sprintf("UPDATE %d", n), nil
		}
		n := 0
		var written []types.Row
		err = s.changeTable(ctx, desc, cond, func(rows []types.Row) ([]exec.Change, error) {
			var changes []exec.Change
			n, written, matched = 0, written[:0], matched[:0]
			for _, row := range rows {
				var ok bool
				var err error
				if changes, ok, err = update(row, changes); err != nil {
					return nil, err
				}
				if ok {
					if ret != nil {
						written = append(written, joined(changes[len(changes)-1].Row, matched[len(matched)-1]))
					}
					n++
				}
			}
			return changes, nil
		})
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("UPDATE %d", n), ret.write(w, written)
	}}, nil
}

// bindAssignedValue binds the value of a SET item over sc: front's
// MultiAssignFunc(i, n, (SELECT ...)) is column i of a subquery of n
// columns (SET (a, b) = (SELECT ...)).
func bindAssignedValue(b *binder.ExprBinder, sc *binder.Scope, node ast.ExprNode) (expr.Expr, error) {
	call, ok := node.(*ast.FuncCallExpr)
	if !ok || call.FnName.L != front.MultiAssignFunc || len(call.Args) != 3 {
		return b.Bind(node, sc)
	}
	i, iok := intLiteral(call.Args[0])
	n, nok := intLiteral(call.Args[1])
	sub, sok := call.Args[2].(*ast.SubqueryExpr)
	if !iok || !nok || !sok || i < 1 {
		return b.Bind(node, sc) // not front's: an unknown function
	}
	return b.BindSubqueryColumn(sub.Query, sc, i-1, n)
}

// intLiteral is the value of an integer constant node.
func intLiteral(node ast.ExprNode) (int, bool) {
	v, ok := node.(ast.ValueExpr)
	if !ok {
		return 0, false
	}
	switch x := v.GetValue().(type) {
	case int64:
		return int(x), true
	case uint64:
		return int(x), true
	}
	return 0, false
}
