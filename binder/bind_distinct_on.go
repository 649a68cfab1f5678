package binder

import (
	"github.com/pingcap/tidb/pkg/parser/ast"

	"streamdb/expr"
	"streamdb/front"
	"streamdb/plan"
	"streamdb/sqlerr"
	"streamdb/types"
)

// splitDistinctOn returns sel without the field that the front layer puts
// first for SELECT DISTINCT ON (...) (front.DistinctOnFunc), and that
// field's arguments, the DISTINCT ON expressions (nil without one). sel
// itself is not changed: a view's or CTE's statement may be bound again.
func splitDistinctOn(sel *ast.SelectStmt) (*ast.SelectStmt, []ast.ExprNode) {
	if sel.Fields == nil || len(sel.Fields.Fields) == 0 {
		return sel, nil
	}
	call, ok := sel.Fields.Fields[0].Expr.(*ast.FuncCallExpr)
	if !ok || call.FnName.L != front.DistinctOnFunc {
		return sel, nil
	}
	out := *sel
	out.Fields = &ast.FieldList{Fields: sel.Fields.Fields[1:]}
	return &out, call.Args
}

// checkDistinctOnOrder enforces PostgreSQL's rule that the ORDER BY of a
// DISTINCT ON query begins with the DISTINCT ON expressions, in any order
// (ORDER BY may also stop before naming them all). distinct and sorted are
// the output columns of the DISTINCT ON and ORDER BY items. The front
// layer writes x NULLS FIRST/LAST as the two items (x) IS NULL, x: the
// first goes with the second. An item that repeats an earlier one orders
// nothing, and PostgreSQL drops it before the check.
func checkDistinctOnOrder(distinct, sorted []int, orderBy *ast.OrderByClause) error {
	inKey := map[int]bool{}
	for _, c := range distinct {
		inKey[c] = true
	}
	covered, seen := map[int]bool{}, map[int]bool{}
	skipped := false
	for i, c := range sorted {
		if seen[c] {
			continue
		}
		seen[c] = true
		member := inKey[c]
		if !member && i+1 < len(sorted) && nullsKey(orderBy.Items[i].Expr) {
			member = inKey[sorted[i+1]]
		}
		if !member {
			skipped = true
			continue
		}
		if skipped {
			return distinctOnOrderError()
		}
		covered[c] = true
	}
	for _, c := range distinct {
		if !covered[c] && skipped {
			return distinctOnOrderError()
		}
	}
	return nil
}

// nullsKey reports whether an ORDER BY item has the form (x) IS NULL that
// the front layer writes for NULLS FIRST/LAST.
func nullsKey(n ast.ExprNode) bool {
	isNull, ok := n.(*ast.IsNullExpr)
	if !ok || isNull.Not {
		return false
	}
	_, ok = isNull.Expr.(*ast.ParenthesesExpr)
	return ok
}

func distinctOnOrderError() error {
	return sqlerr.New(sqlerr.InvalidColumnReference, "SELECT DISTINCT ON expressions must match initial ORDER BY expressions").
		WithHint("Start ORDER BY with the DISTINCT ON expressions, then order the rows within each group: SELECT DISTINCT ON (a) ... ORDER BY a, b DESC.")
}

// distinctOnTop1 keeps, of the rows of in that agree on the columns
// distinct, the first by order: a row_number() top-1 per partition, which
// views keep exact under retraction too. The output has in's columns.
func distinctOnTop1(in plan.Node, distinct []int, order []plan.SortKey) plan.Node {
	cols := in.Schema()
	part := make([]expr.Expr, len(distinct))
	for i, c := range distinct {
		part[i] = &expr.ColRef{Idx: c, Name: cols[c].Name, T: cols[c].Type}
	}
	t := &plan.TopN{Input: in, PartitionBy: part, Order: order, Func: plan.RowNumber, RankName: "DISTINCT ON", Count: 1}
	t.Cols = append(append([]types.Column{}, cols...), types.Column{Name: hiddenWindowColumn(plan.RowNumber, in), Type: types.Int8})
	keep := make([]expr.Expr, len(cols))
	for i, c := range cols {
		keep[i] = &expr.ColRef{Idx: i, Name: c.Name, T: c.Type}
	}
	return &plan.Project{Input: t, Exprs: keep, Cols: cols}
}
