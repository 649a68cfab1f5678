package sql

import (
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/test_driver"

	"streamdb/expr"
	"streamdb/plan"
	"streamdb/sqlerr"
	"streamdb/types"
)

// bindSetOpr binds UNION [ALL] queries. UNION is UNION ALL followed by a
// DISTINCT (an aggregate over every column), so both stay exact under
// retraction.
func (sb *selectBinder) bindSetOpr(n *ast.SetOprStmt) (plan.Node, error) {
	restore, err := sb.withCTEs(n.With)
	defer restore()
	if err != nil {
		return nil, err
	}
	out, err := sb.bindSetOprList(n.SelectList)
	if err != nil {
		return nil, err
	}
	return sb.orderAndLimit(out, n.OrderBy, n.Limit)
}

func (sb *selectBinder) bindSetOprList(list *ast.SetOprSelectList) (plan.Node, error) {
	var acc plan.Node
	for i, item := range list.Selects {
		var node plan.Node
		var op *ast.SetOprType
		var err error
		switch s := item.(type) {
		case *ast.SelectStmt:
			sb.unionBranch = len(list.Selects) > 1
			node, err = sb.bindSelect(s)
			sb.unionBranch = false
			op = s.AfterSetOperator
		case *ast.SetOprSelectList:
			node, err = sb.bindSetOprList(s)
			op = s.AfterSetOperator
		default:
			return nil, sqlerr.New(sqlerr.FeatureNotSupported, "this set operation is not supported")
		}
		if err != nil {
			return nil, err
		}
		if i == 0 {
			acc = node
			continue
		}
		if op == nil || (*op != ast.Union && *op != ast.UnionAll) {
			return nil, sqlerr.New(sqlerr.FeatureNotSupported, "INTERSECT and EXCEPT are not supported yet")
		}
		if acc, err = unionAll(acc, node); err != nil {
			return nil, err
		}
		if *op == ast.Union {
			acc = distinctOf(acc)
		}
	}
	return sb.orderAndLimit(acc, list.OrderBy, list.Limit)
}

// unionAll concatenates two inputs, casting columns to their common types.
func unionAll(a, b plan.Node) (plan.Node, error) {
	ac, bc := a.Schema(), b.Schema()
	if len(ac) != len(bc) {
		return nil, sqlerr.New(sqlerr.SyntaxError, "each UNION query must have the same number of columns")
	}
	cols := make([]types.Column, len(ac))
	for i := range ac {
		t, err := expr.CommonType([]types.Type{ac[i].Type, bc[i].Type})
		if err != nil {
			return nil, sqlerr.New(sqlerr.DatatypeMismatch, "UNION types %s and %s cannot be matched", ac[i].Type, bc[i].Type)
		}
		cols[i] = types.Column{Name: ac[i].Name, Type: t}
	}
	var inputs []plan.Node
	for _, in := range []plan.Node{a, b} {
		in, err := castTo(in, cols)
		if err != nil {
			return nil, err
		}
		if u, ok := in.(*plan.Union); ok {
			inputs = append(inputs, u.Inputs...)
		} else {
			inputs = append(inputs, in)
		}
	}
	return &plan.Union{Inputs: inputs, Cols: cols}, nil
}

// castTo projects n onto cols' types where they differ.
func castTo(n plan.Node, cols []types.Column) (plan.Node, error) {
	in := n.Schema()
	same := true
	exprs := make([]expr.Expr, len(cols))
	for i, c := range cols {
		var e expr.Expr = &expr.ColRef{Idx: i, Name: in[i].Name, T: in[i].Type}
		if in[i].Type != c.Type {
			same = false
			var err error
			if e, err = expr.Cast(e, c.Type); err != nil {
				return nil, err
			}
		}
		exprs[i] = e
	}
	if same {
		return n, nil
	}
	return &plan.Project{Input: n, Exprs: exprs, Cols: cols}, nil
}

// distinctOf groups by every column.
func distinctOf(n plan.Node) plan.Node {
	cols := n.Schema()
	keys := make([]expr.Expr, len(cols))
	for i, c := range cols {
		keys[i] = &expr.ColRef{Idx: i, Name: c.Name, T: c.Type}
	}
	return &plan.Aggregate{Input: n, GroupBy: keys, Cols: cols}
}

// orderAndLimit applies ORDER BY (output column names or positions) and
// LIMIT to the result of a set operation.
func (sb *selectBinder) orderAndLimit(n plan.Node, order *ast.OrderByClause, limit *ast.Limit) (plan.Node, error) {
	cols := n.Schema()
	if order != nil {
		var keys []plan.SortKey
		for _, item := range order.Items {
			idx := -1
			switch e := item.Expr.(type) {
			case *ast.PositionExpr:
				if e.P == nil && e.N >= 1 && e.N <= len(cols) {
					idx = e.N - 1
				}
			case *test_driver.ValueExpr:
				if e.Kind() == test_driver.KindInt64 && int(e.GetInt64()) >= 1 && int(e.GetInt64()) <= len(cols) {
					idx = int(e.GetInt64()) - 1
				}
			case *ast.ColumnNameExpr:
				for i, c := range cols {
					if c.Name == e.Name.Name.O {
						idx = i
						break
					}
				}
			}
			if idx < 0 {
				return nil, sqlerr.New(sqlerr.FeatureNotSupported, "ORDER BY on a UNION must name an output column or its position")
			}
			keys = append(keys, plan.SortKey{Expr: &expr.ColRef{Idx: idx, Name: cols[idx].Name, T: cols[idx].Type}, Desc: item.Desc})
		}
		n = &plan.Sort{Input: n, Keys: keys}
	}
	if limit != nil {
		count, offset, err := bindLimit(limit)
		if err != nil {
			return nil, err
		}
		n = &plan.Limit{Input: n, Count: count, Offset: offset}
	}
	return n, nil
}
