package sql

import (
	"github.com/pingcap/tidb/pkg/parser/ast"

	"streamdb/expr"
	"streamdb/plan"
	"streamdb/sqlerr"
	"streamdb/types"
)

// Subqueries in expressions (scalar, EXISTS, IN) of ad-hoc queries. They
// are bound as plans of their own, uncorrelated: a subquery sees its own
// FROM, not the outer query's columns. resolveSubqueries runs each once
// per execution and puts its result in its place.

// bindSubqueryPlan binds the query of a subquery with the statement's
// subquery binder; outer is the scope of the expression it stands in.
func (b *binder) bindSubqueryPlan(q ast.ResultSetNode, outer *scope) (plan.Node, error) {
	if b.stmt == nil || b.stmt.subquery == nil {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "subqueries are not supported here yet")
	}
	root, err := b.stmt.subquery(q)
	if err != nil && sqlerr.Code(err) == sqlerr.UndefinedColumn && refersTo(q, outer) {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "correlated subqueries are not supported yet: %s", sqlerr.From(err).Message).
			WithHint("A subquery sees only the columns of its own FROM; rewrite it as a join (or a join with GROUP BY for an aggregate).")
	}
	return root, err
}

// refersTo reports whether a column named in q resolves in the outer
// scope: a subquery that failed on an unknown column and names one of the
// outer query's is a correlated subquery.
func refersTo(q ast.Node, outer *scope) bool {
	if outer == nil {
		return false
	}
	v := &columnNames{}
	q.Accept(v)
	for _, c := range v.names {
		if _, err := outer.resolve(c.Table.O, c.Name.O); err == nil {
			return true
		}
	}
	return false
}

type columnNames struct{ names []*ast.ColumnName }

func (v *columnNames) Enter(n ast.Node) (ast.Node, bool) {
	if c, ok := n.(*ast.ColumnNameExpr); ok {
		v.names = append(v.names, c.Name)
	}
	return n, false
}
func (v *columnNames) Leave(n ast.Node) (ast.Node, bool) { return n, true }

// bindScalarOrExists binds (SELECT ...) and EXISTS (SELECT ...).
func (b *binder) bindScalarOrExists(n ast.ExprNode, s *scope) (expr.Expr, error) {
	sub, ok := n.(*ast.SubqueryExpr)
	exists, not := ok && sub.Exists, false
	if ex, isExists := n.(*ast.ExistsSubqueryExpr); isExists {
		if sub, ok = ex.Sel.(*ast.SubqueryExpr); !ok {
			return nil, sqlerr.New(sqlerr.FeatureNotSupported, "EXISTS needs a subquery")
		}
		exists, not = true, ex.Not
	}
	root, err := b.bindSubqueryPlan(sub.Query, s)
	if err != nil {
		return nil, err
	}
	if exists {
		e := expr.Expr(&expr.Subquery{Kind: expr.SubqueryExists, Plan: root, T: types.Bool})
		if not {
			return expr.Not(e)
		}
		return e, nil
	}
	cols := root.Schema()
	if len(cols) != 1 {
		return nil, sqlerr.New(sqlerr.SyntaxError, "subquery must return only one column")
	}
	return &expr.Subquery{Kind: expr.SubqueryScalar, Plan: root, T: cols[0].Type}, nil
}

// bindInSubquery binds x [NOT] IN (SELECT y ...).
func (b *binder) bindInSubquery(n *ast.PatternInExpr, s *scope) (expr.Expr, error) {
	sub, ok := n.Sel.(*ast.SubqueryExpr)
	if !ok {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "IN needs a list or a subquery")
	}
	left, err := b.bindExpr(n.Expr, s)
	if err != nil {
		return nil, err
	}
	root, err := b.bindSubqueryPlan(sub.Query, s)
	if err != nil {
		return nil, err
	}
	cols := root.Schema()
	if len(cols) != 1 {
		return nil, sqlerr.New(sqlerr.SyntaxError, "subquery has too many columns")
	}
	// The comparison is checked now, with a placeholder of the
	// subquery's type, so that a type mismatch fails at PREPARE.
	if _, err := expr.Binary("=", left, &expr.Const{D: types.Null, T: cols[0].Type}); err != nil {
		return nil, err
	}
	name := expr.InSubquery
	if n.Not {
		name = expr.NotInSubquery
	}
	return &expr.Func{Name: name, Infix: true, T: types.Bool, Args: []expr.Expr{left, &expr.Subquery{Kind: expr.SubqueryIn, Plan: root, T: cols[0].Type}},
		Fn: func([]types.Datum) (types.Datum, error) {
			return types.Null, sqlerr.New(sqlerr.FeatureNotSupported, "subqueries are supported in queries (SELECT), not in this statement yet")
		}}, nil
}
