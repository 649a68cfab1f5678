package sql

import (
	"github.com/pingcap/tidb/pkg/parser/ast"

	"streamdb/binder"
	"streamdb/catalog"
	"streamdb/expr"
	"streamdb/front"
	"streamdb/sqlerr"
	"streamdb/types"
)

// prepareUpdateFrom prepares UPDATE t SET ... FROM list WHERE ...: SET,
// WHERE and RETURNING read the target's columns and the list's; each
// target row that joins a row of the list is updated once, from the
// first such row (update_from_join.go).
func (s *session) prepareUpdateFrom(n *ast.UpdateStmt, params *binder.Params) (*prepared, error) {
	restore := s.allowSubqueries(params) // update_subquery.go
	defer restore()
	desc, cols, j, err := s.bindJoinTarget("UPDATE", n.TableRefs, n.Order, n.Limit, n.Where, params)
	if err != nil {
		return nil, err
	}
	sets, err := s.bindAssignments(n.List, j.Scope, desc, cols, params)
	if err != nil {
		return nil, err
	}
	restore()
	ret, err := s.bindReturning(params.Statement().Returning, j.Scope, params)
	if err != nil {
		return nil, err
	}
	c := s.newRowChange(&rowChange{desc: desc, cols: cols, verb: "UPDATE", cond: targetOnlyWhere(j.Where, len(cols)),
		sets: sets, ret: ret, join: newDMLJoin(j, len(cols))})
	return c.prepared(s, params), nil
}

// bindJoinTarget binds the target and the FROM (USING) list of an UPDATE
// ... FROM or DELETE ... USING (verb) with its WHERE, for the caller
// that lets them hold subqueries (allowSubqueries).
func (s *session) bindJoinTarget(verb string, refs *ast.TableRefsClause, order *ast.OrderByClause, limit *ast.Limit,
	where ast.ExprNode, params *binder.Params) (*catalog.Descriptor, []types.Column, *binder.DMLJoin, error) {
	if err := refuseOrderLimit(verb, order, limit); err != nil {
		return nil, nil, nil, err
	}
	targetRefs, from, ok := splitDMLJoin(refs)
	if !ok {
		if verb == "DELETE" {
			return nil, nil, nil, sqlerr.New(sqlerr.FeatureNotSupported, "this form of DELETE ... USING is not supported").
				WithHint("Write DELETE FROM t USING other WHERE ...")
		}
		return nil, nil, nil, sqlerr.New(sqlerr.FeatureNotSupported, "this form of UPDATE ... FROM is not supported").
			WithHint("Name the table to update first: UPDATE t SET ... FROM other WHERE ...")
	}
	desc, alias, err := s.tableTarget(targetRefs, verb, params)
	if err != nil {
		return nil, nil, nil, err
	}
	cols, sc, err := tableScope(desc, alias)
	if err != nil {
		return nil, nil, nil, err
	}
	j, err := binder.BindDMLJoin(bindCatalog{s.e}, params, from, where, sc)
	if err != nil {
		return nil, nil, nil, err
	}
	return desc, cols, j, nil
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
