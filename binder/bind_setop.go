package binder

import (
	"fmt"

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

// bindSetOprList binds a list of queries joined by set operators. The
// parser lists them flat, left to right; INTERSECT binds tighter than
// UNION and EXCEPT (as in PostgreSQL and the SQL standard), so each run of
// INTERSECTs is combined first and the rest is applied left to right.
func (sb *selectBinder) bindSetOprList(list *ast.SetOprSelectList) (plan.Node, error) {
	var terms []plan.Node
	var ops []ast.SetOprType // ops[i] joins terms[i] to what is before it
	for i, item := range list.Selects {
		if err := sb.params.interrupted(); err != nil {
			return nil, err
		}
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
			terms, ops = append(terms, node), append(ops, ast.UnionAll)
			continue
		}
		if op == nil {
			return nil, sqlerr.New(sqlerr.FeatureNotSupported, "this set operation is not supported")
		}
		if *op == ast.Intersect || *op == ast.IntersectAll {
			last := len(terms) - 1
			if terms[last], err = intersectOrExcept(*op, terms[last], node); err != nil {
				return nil, err
			}
			continue
		}
		terms, ops = append(terms, node), append(ops, *op)
	}
	acc := terms[0]
	for i := 1; i < len(terms); i++ {
		var err error
		switch ops[i] {
		case ast.Union, ast.UnionAll:
			if acc, err = unionAll(acc, terms[i]); err != nil {
				return nil, err
			}
			if ops[i] == ast.Union {
				acc = distinctOf(acc)
			}
		default:
			if acc, err = intersectOrExcept(ops[i], acc, terms[i]); err != nil {
				return nil, err
			}
		}
	}
	return sb.orderAndLimit(acc, list.OrderBy, list.Limit)
}

// intersectOrExcept is INTERSECT [ALL] or EXCEPT [ALL] of two inputs,
// cast to their common column types.
func intersectOrExcept(op ast.SetOprType, a, b plan.Node) (plan.Node, error) {
	name := "INTERSECT"
	if op == ast.Except || op == ast.ExceptAll {
		name = "EXCEPT"
	}
	cols, err := commonColumns(name, a.Schema(), b.Schema())
	if err != nil {
		return nil, err
	}
	if a, err = castTo(a, cols); err != nil {
		return nil, err
	}
	if b, err = castTo(b, cols); err != nil {
		return nil, err
	}
	return &SetOp{Except: name == "EXCEPT", All: op == ast.IntersectAll || op == ast.ExceptAll, Left: a, Right: b, Cols: cols}, nil
}

// commonColumns are the columns of a set operation: the left side's names
// with the types both sides' values convert to.
func commonColumns(op string, ac, bc []types.Column) ([]types.Column, error) {
	if len(ac) != len(bc) {
		return nil, sqlerr.New(sqlerr.SyntaxError, "each %s query must have the same number of columns", op)
	}
	cols := make([]types.Column, len(ac))
	for i := range ac {
		t, err := expr.CommonType([]types.Type{ac[i].Type, bc[i].Type})
		if err != nil {
			return nil, sqlerr.New(sqlerr.DatatypeMismatch, "%s types %s and %s cannot be matched", op, ac[i].Type, bc[i].Type)
		}
		cols[i] = types.Column{Name: ac[i].Name, Type: t}
	}
	return cols, nil
}

// unionAll concatenates two inputs, casting columns to their common types.
func unionAll(a, b plan.Node) (plan.Node, error) {
	cols, err := commonColumns("UNION", a.Schema(), b.Schema())
	if err != nil {
		return nil, err
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
		l, err := sb.bindLimit(limit, nil)
		if err != nil {
			return nil, err
		}
		l.Input = n
		n = l
	}
	return n, nil
}

// SetOp is INTERSECT [ALL] or EXCEPT [ALL] of two inputs of the same
// column types, in ad-hoc queries. It compares whole rows, NULLs equal to
// NULLs, as PostgreSQL does. It is evaluated when the query runs
// (materializeSetOps): a materialized view refuses it (CheckStreamable).
type SetOp struct {
	Except bool // EXCEPT, else INTERSECT
	All    bool
	Left   plan.Node
	Right  plan.Node
	Cols   []types.Column
}

func (s *SetOp) Schema() []types.Column { return s.Cols }
func (s *SetOp) Children() []plan.Node  { return []plan.Node{s.Left, s.Right} }
func (s *SetOp) Describe() string {
	op := "Intersect"
	if s.Except {
		op = "Except"
	}
	if s.All {
		op += " All"
	}
	return fmt.Sprintf("%s (both sides run, rows counted by value)", op)
}
