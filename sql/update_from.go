package sql

import (
	"github.com/pingcap/tidb/pkg/parser/ast"

	"streamdb/binder"
	"streamdb/expr"
	"streamdb/front"
	"streamdb/sqlerr"
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
	ret, err := s.bindReturning(params.Statement().Returning, j.Scope, params)
	if err != nil {
		return nil, err
	}
	c := s.newRowChange(&rowChange{desc: desc, cols: cols, verb: "UPDATE", cond: targetOnlyWhere(j.Where, len(cols)),
		sets: sets, ret: ret, join: newDMLJoin(j, len(cols))})
	return c.prepared(s, params), nil
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
