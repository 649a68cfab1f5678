package sql

import (
	"github.com/pingcap/tidb/pkg/parser/ast"

	"streamdb/catalog"
	"streamdb/exec"
	"streamdb/expr"
	"streamdb/front"
	"streamdb/plan"
	"streamdb/sqlerr"
	"streamdb/types"
)

// Generated columns (GENERATED ALWAYS AS (expr) STORED), kept in the
// catalog as the expression's SQL text and bound again wherever it is
// used. A stream computes them as its reader decodes each message
// (plan.Scan.Generated), once for every view that reads the stream; a
// table computes them as each row is written (INSERT, UPDATE, COPY) and
// stores the values. As in PostgreSQL, a generated column takes no value
// but DEFAULT, its expression must be immutable and may not read another
// generated column.

// bindGenerated binds the generated columns of d over its columns cols,
// each cast to its column's type; none for a relation without any.
func bindGenerated(d *catalog.Descriptor, cols []types.Column) ([]plan.GeneratedColumn, error) {
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
	params := &boundParams{stmt: st}
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
	return assignTo(e, col, node, params)
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

// checkGeneratedColumns checks the generated columns of a new stream or
// table d (columns cols) as CREATE declares them.
func checkGeneratedColumns(n *front.CreateSource, d *catalog.Descriptor, cols []types.Column) error {
	for i, c := range n.Columns {
		if c.Generated == nil {
			continue
		}
		switch {
		case c.Default != nil || c.Serial:
			return sqlerr.New(sqlerr.SyntaxError, "both default and generation expression specified for column \"%s\" of %s \"%s\"", c.Name, n.Kind, n.Name)
		case c.Identity != "":
			return sqlerr.New(sqlerr.SyntaxError, "both identity and generation expression specified for column \"%s\" of %s \"%s\"", c.Name, n.Kind, n.Name)
		}
		d.Columns[i].Generated = c.GeneratedText
	}
	_, err := bindGenerated(d, cols)
	return err
}

// refuseGeneratedValue refuses a value other than DEFAULT for generated
// column col in an INSERT.
func refuseGeneratedValue(desc *catalog.Descriptor, col int) error {
	c := desc.Columns[col]
	if c.Generated == "" {
		return nil
	}
	return &sqlerr.Error{Code: sqlerr.GeneratedAlways,
		Message: "cannot insert a non-DEFAULT value into column \"" + c.Name + "\"",
		Detail:  "Column \"" + c.Name + "\" is a generated column."}
}

// refuseGeneratedUpdate refuses an UPDATE that sets generated column col
// to anything but DEFAULT.
func refuseGeneratedUpdate(desc *catalog.Descriptor, col int) error {
	c := desc.Columns[col]
	if c.Generated == "" {
		return nil
	}
	return &sqlerr.Error{Code: sqlerr.GeneratedAlways,
		Message: "column \"" + c.Name + "\" can only be updated to DEFAULT",
		Detail:  "Column \"" + c.Name + "\" is a generated column."}
}

// computeGenerated sets the generated columns gen of the rows a statement
// inserts into a table.
func computeGenerated(gen []plan.GeneratedColumn, changes []exec.Change) error {
	for _, ch := range changes {
		if ch.Sign < 0 {
			continue
		}
		for _, g := range gen {
			v, err := g.Expr.Eval(ch.Row)
			if err != nil {
				return err
			}
			ch.Row[g.Col] = v
		}
	}
	return nil
}
