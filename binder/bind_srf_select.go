package binder

import (
	"fmt"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"streamdb/plan"
	"streamdb/sqlerr"
	"streamdb/types"
)

// Set-returning functions in a select list. PostgreSQL runs the SRFs of
// one select list side by side for each input row, as many rows as the
// longest gives (the others padded with NULL), and none for a row where
// every SRF gives none. That is the input joined laterally with one
// SRFNode of the list's calls, so bindSelectSRFs builds exactly that join
// (after WHERE) and has each call read as a hidden column of it.
//
// PostgreSQL evaluates these SRFs after aggregation and window functions;
// that order is not built, so a select list with SRFs and aggregates,
// GROUP BY, HAVING or window functions is refused (0A000), as are SRFs
// nested in SRF arguments and SRFs under CASE, COALESCE or an aggregate
// (which PostgreSQL refuses too). DISTINCT, ORDER BY and LIMIT apply to
// the rows the SRFs give, as in PostgreSQL.

// srfTable qualifies the hidden columns that stand for the calls.
const srfTable = "streamdb_srf"

// srfFinder collects the top-level set-returning calls of a select-list
// item and replaces each by a reference to its hidden column.
type srfFinder struct {
	calls []*ast.FuncCallExpr
	err   error
	// under names the CASE or COALESCE the walk is in, if any: an SRF
	// there would run conditionally, which PostgreSQL refuses.
	under []string
}

// conditional names n if it evaluates its operands conditionally.
func conditional(n ast.Node) string {
	switch n := n.(type) {
	case *ast.CaseExpr:
		return "CASE"
	case *ast.FuncCallExpr:
		if n.FnName.L == "coalesce" || n.FnName.L == "ifnull" {
			return "COALESCE"
		}
	}
	return ""
}

func (f *srfFinder) Enter(n ast.Node) (ast.Node, bool) {
	switch n := n.(type) {
	case *ast.SubqueryExpr, *ast.ExistsSubqueryExpr:
		return n, true // a subquery's SRFs are its own
	case *ast.FuncCallExpr:
		if isSRFCall(n) {
			if len(f.under) > 0 && f.err == nil {
				f.err = srfRefusal(f.under[len(f.under)-1])
			}
			if err := noNestedSRF(n); err != nil && f.err == nil {
				f.err = sqlerr.New(sqlerr.FeatureNotSupported, "set-returning functions in the arguments of a set-returning function are not supported").
					WithHint("Write the inner one as a FROM item (FROM generate_series(1, 3) AS a(x), generate_series(1, x)).")
			}
			return n, true
		}
	}
	if c := conditional(n); c != "" {
		f.under = append(f.under, c)
	}
	return n, false
}

func (f *srfFinder) Leave(n ast.Node) (ast.Node, bool) {
	if conditional(n) != "" {
		f.under = f.under[:len(f.under)-1]
	}
	call, ok := n.(*ast.FuncCallExpr)
	if !ok || !isSRFCall(call) {
		return n, true
	}
	f.calls = append(f.calls, call)
	ref := &ast.ColumnNameExpr{Name: &ast.ColumnName{Table: ast.NewCIStr(srfTable), Name: ast.NewCIStr(fmt.Sprintf("c%d", len(f.calls)))}}
	return ref, true
}

// isSRFCall reports whether call is one of the set-returning functions.
func isSRFCall(call *ast.FuncCallExpr) bool {
	switch call.FnName.L {
	case "generate_series", "unnest", "regexp_matches", "regexp_split_to_table", "generate_subscripts",
		"jsonb_array_elements", "jsonb_array_elements_text", "jsonb_object_keys", "jsonb_path_query",
		"json_array_elements", "json_array_elements_text", "json_object_keys",
		"jsonb_each", "jsonb_each_text", "json_each", "json_each_text":
		return true
	}
	return false
}

// containsSRF reports whether n calls a set-returning function outside
// its subqueries.
func containsSRF(n ast.Node) bool {
	return containsNode(n, func(n ast.Node) bool {
		call, ok := n.(*ast.FuncCallExpr)
		return ok && isSRFCall(call)
	})
}

// bindSelectSRFs joins input with the set-returning calls of the select
// list, if it has any, and returns the join and its scope. The list's
// items are rewritten to read the calls' hidden columns until restore is
// called (the statement's syntax tree is bound again by prepared
// statements), and each such item without an alias is named after its
// outermost function, as before.
func (sb *selectBinder) bindSelectSRFs(sel *ast.SelectStmt, input plan.Node, in *scope) (plan.Node, *scope, func(), error) {
	restore := func() {}
	has := false
	for _, f := range sel.Fields.Fields {
		has = has || (f.Expr != nil && containsSRF(f.Expr))
	}
	if !has {
		return input, in, restore, nil
	}
	if sel.GroupBy != nil || sel.Having != nil {
		return nil, nil, restore, srfRefusal("a select list with GROUP BY or HAVING (not supported yet)")
	}
	for _, f := range sel.Fields.Fields {
		if f.Expr != nil && (containsAgg(f.Expr) || containsWindow(f.Expr)) {
			return nil, nil, restore, srfRefusal("a select list with aggregates or window functions (not supported yet)")
		}
	}
	finder := &srfFinder{}
	type saved struct {
		f     *ast.SelectField
		expr  ast.ExprNode
		alias ast.CIStr
	}
	var undo []saved
	restore = func() {
		for _, u := range undo {
			u.f.Expr, u.f.AsName = u.expr, u.alias
		}
	}
	for _, f := range sel.Fields.Fields {
		if f.Expr == nil || !containsSRF(f.Expr) {
			continue
		}
		undo = append(undo, saved{f, f.Expr, f.AsName})
		if f.AsName.O == "" {
			f.AsName = ast.NewCIStr(ColumnName(f.Expr))
		}
		out, _ := f.Expr.Accept(finder)
		if finder.err != nil {
			return nil, nil, restore, finder.err
		}
		f.Expr = out.(ast.ExprNode)
	}
	c := &correlation{b: &binder{stmt: sb.params, corr: sb.corr}, outer: in}
	b := &binder{stmt: sb.params, corr: c}
	node := &SRFNode{}
	for i, call := range finder.calls {
		sc, err := bindSRFCall(b, call, &scope{})
		if err != nil {
			return nil, nil, restore, err
		}
		node.Calls = append(node.Calls, sc)
		node.Cols = append(node.Cols, types.Column{Name: fmt.Sprintf("c%d", i+1), Type: sc.T})
	}
	out := &scope{cols: append([]scopeColumn{}, in.cols...)}
	for _, col := range node.Cols {
		out.cols = append(out.cols, scopeColumn{table: srfTable, name: col.Name, typ: col.Type, hidden: true})
	}
	join := &LateralJoin{Kind: plan.InnerJoin, Left: input, Right: node, Outer: c.refs,
		Cols: append(append([]types.Column{}, input.Schema()...), node.Cols...)}
	return join, out, restore, nil
}
