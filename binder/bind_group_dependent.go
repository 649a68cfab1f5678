package binder

import (
	"github.com/pingcap/tidb/pkg/parser/ast"

	"streamdb/expr"
)

// A grouped query may read any column of a table whose primary key it
// groups by (PostgreSQL's functional dependency; Django groups by the
// primary key only). Such a column is added as a group key before the
// select list is bound: it takes one value per group, so the groups stay
// the same. Only columns read outside aggregate calls and subqueries are
// added, and only ones that are not group keys already, so a query that
// needs no dependency is planned as before.

// addDependentGroupKeys adds to ac the columns that nodes read (outside
// aggregates and subqueries) and that depend on a grouped primary key.
func (b *binder) addDependentGroupKeys(ac *aggContext, nodes []ast.Node) {
	in := ac.input
	grouped := map[int]bool{}
	for _, g := range ac.groupKeys {
		if c, ok := g.(*expr.ColRef); ok {
			grouped[c.Idx] = true
		}
	}
	keyed := map[string]bool{} // qualifier → every primary key column grouped
	for i, c := range in.cols {
		if !c.pk {
			continue
		}
		if all, seen := keyed[c.table]; !seen || all {
			keyed[c.table] = grouped[i]
		}
	}
	if len(keyed) == 0 {
		return
	}
	v := &columnCollector{}
	for _, n := range nodes {
		if n != nil {
			n.Accept(v)
		}
	}
	for _, col := range v.cols {
		inner := &binder{stmt: b.stmt, depth: b.depth, corr: b.corr}
		e, err := inner.bindExpr(col, in)
		if err != nil {
			continue // reported when the select list is bound
		}
		c, ok := e.(*expr.ColRef)
		if !ok || c.Idx >= len(in.cols) || grouped[c.Idx] || !keyed[in.cols[c.Idx].table] {
			continue
		}
		grouped[c.Idx] = true
		ac.groupKeys = append(ac.groupKeys, c)
		ac.groupStrs = append(ac.groupStrs, c.String())
	}
}

// columnCollector gathers the column references of an expression outside
// aggregate and window calls and subqueries.
type columnCollector struct {
	cols []*ast.ColumnNameExpr
}

func (v *columnCollector) Enter(n ast.Node) (ast.Node, bool) {
	switch n := n.(type) {
	case *ast.SubqueryExpr, *ast.ExistsSubqueryExpr, *ast.AggregateFuncExpr, *ast.WindowFuncExpr:
		return n, true
	case *ast.ColumnNameExpr:
		v.cols = append(v.cols, n)
		return n, true
	}
	return n, false
}

func (v *columnCollector) Leave(n ast.Node) (ast.Node, bool) { return n, true }
