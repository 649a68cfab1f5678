package binder

import (
	"github.com/pingcap/tidb/pkg/parser/ast"

	"streamdb/plan"
	"streamdb/sqlerr"
	"streamdb/types"
)

// withCTEs makes the common table expressions of a WITH clause visible to
// the rest of the query, and checks them. Each reference binds the CTE's
// query afresh (inlining); a recursive CTE of WITH RECURSIVE binds as a RecursiveCTE
// (bind_recursive.go), which ad-hoc queries evaluate by iteration.
func (sb *selectBinder) withCTEs(w *ast.WithClause) (restore func(), err error) {
	saved := sb.ctes
	restore = func() { sb.ctes = saved }
	if w == nil {
		return restore, nil
	}
	next := make(map[string]*ast.CommonTableExpression, len(saved)+len(w.CTEs))
	for k, v := range saved {
		next[k] = v
	}
	for _, cte := range w.CTEs {
		if _, dup := next[cte.Name.O]; dup && saved[cte.Name.O] == nil {
			return restore, sqlerr.New(sqlerr.DuplicateAlias, "WITH query name %q specified more than once", cte.Name.O)
		}
		next[cte.Name.O] = cte
	}
	sb.ctes = next
	// PostgreSQL checks every WITH query, referenced or not: bind each
	// once, so that an unreferenced one that is wrong fails the statement
	// too.
	for _, cte := range w.CTEs {
		if _, _, _, err := sb.bindCTE(cte.Name.O, ""); err != nil {
			return restore, err
		}
	}
	return restore, nil
}

// bindCTE binds a reference to the CTE called name, if there is one.
func (sb *selectBinder) bindCTE(name, alias string) (plan.Node, *scope, bool, error) {
	cte, ok := sb.ctes[name]
	if !ok {
		return nil, nil, false, nil
	}
	var node plan.Node
	var err error
	// A CTE sees only the CTEs defined before it; keep it simple and let it
	// see the same set (no recursion, so a self-reference is an error).
	saved := sb.ctes
	inner := make(map[string]*ast.CommonTableExpression, len(saved))
	for k, v := range saved {
		if k != name {
			inner[k] = v
		}
	}
	sb.ctes = inner
	recursive := false
	if cte.IsRecursive {
		node, recursive, err = sb.bindRecursiveCTE(cte)
	}
	if !recursive {
		switch q := cte.Query.Query.(type) {
		case *ast.SelectStmt:
			node, err = sb.bindSelect(q)
		case *ast.SetOprStmt:
			node, err = sb.bindSetOpr(q)
		default:
			err = sqlerr.New(sqlerr.FeatureNotSupported, "this WITH query is not supported")
		}
	}
	sb.ctes = saved
	if err == nil && !recursive {
		err = sb.params.nameOperator(name, node)
	}
	if err != nil {
		return nil, nil, true, err
	}
	cols := node.Schema()
	if len(cte.ColNameList) > 0 {
		if len(cte.ColNameList) > len(cols) {
			return nil, nil, true, sqlerr.New(sqlerr.InvalidColumnReference, "WITH query %q has %d columns available but %d columns specified", name, len(cols), len(cte.ColNameList))
		}
		renamed := append([]types.Column(nil), cols...)
		for i, c := range cte.ColNameList {
			renamed[i].Name = c.O
		}
		cols = renamed
	}
	if alias == "" {
		alias = name
	}
	return node, scopeOf(alias, cols), true, nil
}
