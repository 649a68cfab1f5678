package binder

import (
	"fmt"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"streamdb/catalog"
	"streamdb/expr"
	"streamdb/front"
	"streamdb/plan"
	"streamdb/sqlerr"
	"streamdb/types"
)

// A plain view (CREATE VIEW, sql/plain_views.go) is bound in place in
// each query that reads it: its stored query text, parsed and bound
// against the same catalog as the rest of the query, fitted to the
// view's stored columns.

// BindPlainViewQuery parses a view's query text and binds it against cat,
// as a statement of its own (its WITH queries, windows and subqueries
// are its own; it has no parameters).
func BindPlainViewQuery(cat Catalog, text string) (*front.Statement, plan.Node, error) {
	st, err := front.Parse(text)
	if err != nil {
		return nil, nil, err
	}
	switch st.Node.(type) {
	case *ast.SelectStmt, *ast.SetOprStmt:
	default:
		return nil, nil, sqlerr.New(sqlerr.SyntaxError, "a view's query must be a SELECT")
	}
	root, err := BindQuery(cat, st, NoParams(st))
	return st, root, err
}

// BindPlainView binds plain view d's query as a query that reads the
// view sees it: with exactly the view's stored columns.
func BindPlainView(cat Catalog, d *catalog.Descriptor) (plan.Node, error) {
	_, root, err := BindPlainViewQuery(catalogForView(cat, d), d.Query)
	if err != nil {
		return nil, err
	}
	cols, err := d.Schema()
	if err != nil {
		return nil, err
	}
	return fitViewColumns(d.Name, root, cols)
}

// expandPlainView binds a reference to view d: its query, bound in place,
// with the view's columns.
func (sb *selectBinder) expandPlainView(d *catalog.Descriptor, alias string) (plan.Node, *scope, error) {
	_, root, err := BindPlainViewQuery(catalogForView(sb.cat, d), d.Query)
	if err != nil {
		se := sqlerr.From(err)
		out := *se
		out.Position = 0
		if out.Detail == "" {
			out.Detail = fmt.Sprintf("The error is in the query of view %s.", d.Name)
		}
		return nil, nil, &out
	}
	cols, err := d.Schema()
	if err != nil {
		return nil, nil, err
	}
	node, err := fitViewColumns(d.Name, root, cols)
	if err != nil {
		return nil, nil, err
	}
	if alias == "" {
		alias = d.Name
	}
	return node, scopeOf(alias, cols), nil
}

// fitViewColumns gives a view's bound query exactly the view's stored
// columns: it keeps the first len(cols) columns and types the untyped
// ones text, as CREATE VIEW recorded them.
func fitViewColumns(view string, root plan.Node, cols []types.Column) (plan.Node, error) {
	got := root.Schema()
	mismatch := len(got) < len(cols)
	project := len(got) > len(cols)
	for i := 0; i < len(cols) && !mismatch; i++ {
		switch {
		case got[i].Type == cols[i].Type:
		case got[i].Type == types.Unknown && cols[i].Type == types.Text:
			project = true
		default:
			mismatch = true
		}
	}
	if mismatch {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "view %s no longer matches its definition: its query gives other columns than the view has", view).
			WithHint("Run CREATE OR REPLACE VIEW %s again with its query, or DROP VIEW and CREATE VIEW.", view)
	}
	if !project {
		return root, nil
	}
	p := &plan.Project{Input: root, Cols: append([]types.Column(nil), cols...)}
	for i, c := range cols {
		var x expr.Expr = &expr.ColRef{Idx: i, Name: got[i].Name, T: got[i].Type}
		if got[i].Type != c.Type {
			cast, err := expr.Cast(x, c.Type)
			if err != nil {
				return nil, err
			}
			x = cast
		}
		p.Exprs = append(p.Exprs, x)
	}
	return p, nil
}
