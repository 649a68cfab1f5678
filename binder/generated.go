package binder

import (
	"github.com/pingcap/tidb/pkg/parser/ast"

	"streamdb/catalog"
	"streamdb/expr"
	"streamdb/front"
	"streamdb/plan"
	"streamdb/sqlerr"
	"streamdb/types"
)

// The expressions of generated columns (GENERATED ALWAYS AS (expr)
// STORED), kept in the catalog as SQL text and bound again wherever they
// are used (sql/generated.go computes them as a table's rows are
// written).

// BindGenerated binds the generated columns of d over its columns cols,
// each cast to its column's type; none for a relation without any.
func BindGenerated(d *catalog.Descriptor, cols []types.Column) ([]plan.GeneratedColumn, error) {
	var out []plan.GeneratedColumn
	for i, c := range d.Columns {
		if c.Generated == "" || i >= len(cols) {
			continue
		}
		e, err := bindGeneratedExpr(d, cols, i)
		if err != nil {
			return nil, err
		}
		out = append(out, plan.GeneratedColumn{Col: i, Expr: e})
	}
	return out, nil
}

// bindGeneratedExpr binds the expression of generated column i.
func bindGeneratedExpr(d *catalog.Descriptor, cols []types.Column, i int) (expr.Expr, error) {
	col := cols[i]
	text := d.Columns[i].Generated
	st, err := front.Parse("SELECT " + text)
	if err != nil {
		return nil, generatedError(col, err)
	}
	sel, ok := st.Node.(*ast.SelectStmt)
	if !ok || sel.Fields == nil || len(sel.Fields.Fields) != 1 || sel.From != nil {
		return nil, sqlerr.New(sqlerr.SyntaxError, "the generation expression of column \"%s\" is not one expression: %s", col.Name, text)
	}
	node := sel.Fields.Fields[0].Expr
	if err := checkGeneratedNode(node); err != nil {
		return nil, err
	}
	params := NoParams(st)
	b := &binder{stmt: params}
	e, err := b.bindExpr(node, scopeOf(d.Name, cols))
	if err != nil {
		return nil, generatedError(col, err)
	}
	if expr.HasParams(e) {
		return nil, sqlerr.New(sqlerr.SyntaxError, "the generation expression of column \"%s\" cannot use parameters", col.Name)
	}
	var nested string
	expr.Visit(e, func(x expr.Expr) {
		if r, ok := x.(*expr.ColRef); ok && nested == "" && r.Idx < len(d.Columns) && d.Columns[r.Idx].Generated != "" {
			nested = d.Columns[r.Idx].Name
		}
	})
	if nested != "" {
		return nil, &sqlerr.Error{Code: sqlerr.InvalidObjectDefinition,
			Message: "cannot use generated column \"" + nested + "\" in column generation expression",
			Detail:  "A generated column cannot reference another generated column."}
	}
	if name := expr.VolatileCall(e); name != "" {
		return nil, &sqlerr.Error{Code: sqlerr.InvalidObjectDefinition, Message: "generation expression is not immutable",
			Detail: name + "() answers differently each time it is called.",
			Hint:   "Compute the value when you query the column, or store it in the events."}
	}
	return AssignTo(e, col, node, params)
}

// checkGeneratedNode refuses what PostgreSQL refuses in a generation
// expression before binding: subqueries, aggregates and window functions.
func checkGeneratedNode(n ast.ExprNode) error {
	v := &generatedChecker{}
	n.Accept(v)
	return v.err
}

type generatedChecker struct{ err error }

func (v *generatedChecker) Enter(n ast.Node) (ast.Node, bool) {
	if v.err != nil {
		return n, true
	}
	switch n.(type) {
	case *ast.SubqueryExpr, *ast.ExistsSubqueryExpr:
		v.err = sqlerr.New(sqlerr.FeatureNotSupported, "cannot use subquery in column generation expression")
	case *ast.AggregateFuncExpr:
		v.err = sqlerr.New(sqlerr.GroupingError, "aggregate functions are not allowed in column generation expressions")
	case *ast.WindowFuncExpr:
		v.err = sqlerr.New(sqlerr.WindowingError, "window functions are not allowed in column generation expressions")
	}
	return n, v.err != nil
}

func (v *generatedChecker) Leave(n ast.Node) (ast.Node, bool) { return n, true }

// generatedError says which column's generation expression failed.
func generatedError(col types.Column, err error) error {
	if e, ok := err.(*sqlerr.Error); ok {
		out := *e
		out.Position = 0
		if out.Detail == "" {
			out.Detail = "In the generation expression of column \"" + col.Name + "\"."
		}
		return &out
	}
	return err
}
