package binder

import (
	"strconv"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/opcode"

	"streamdb/expr"
	"streamdb/plan"
	"streamdb/sqlerr"
	"streamdb/types"
)

// Row values: ROW(a, b) and (a, b). streamdb has no record type, so a row
// value is bound only where PostgreSQL compares it field by field, and
// each such comparison becomes the scalar comparisons of its fields with
// PostgreSQL's NULL rules:
//
//   - (a, b) = (c, d) is a = c AND b = d; <> is a <> c OR b <> d.
//   - (a, b) < (c, d) is a < c OR (a = c AND b < d) (<= > >= alike, the
//     last field compared with the operator itself): the fields are
//     compared left to right up to the first pair that is unequal or
//     NULL, and a NULL there makes the result NULL.
//   - IS [NOT] DISTINCT FROM compares every pair with IS NOT DISTINCT
//     FROM; (a, b) IS NULL is a IS NULL AND b IS NULL, IS NOT NULL is
//     a IS NOT NULL AND b IS NOT NULL (so neither is the other's NOT).
//   - (a, b) IN ((1, 2), (3, 4)) is the OR of the row equalities.
//   - (a, b) op (SELECT x, y ...) compares with one scalar subquery per
//     column, each bound from the same query: each gives NULL over no
//     rows and fails over more than one, as the row subquery does.
//   - (a, b) [NOT] IN (SELECT x, y ...) is one correlated aggregate over
//     the subquery's rows (bindRowQuantified), ad hoc only.

// rowFields returns the fields of n when it is a row constructor.
func rowFields(n ast.ExprNode) ([]ast.ExprNode, bool) {
	for {
		p, ok := n.(*ast.ParenthesesExpr)
		if !ok {
			break
		}
		n = p.Expr
	}
	r, ok := n.(*ast.RowExpr)
	if !ok {
		return nil, false
	}
	return r.Values, true
}

// isRowOperand reports whether a comparison with n is a row comparison.
func isRowOperand(n ast.ExprNode) bool {
	_, ok := rowFields(n)
	return ok
}

// errRowHere refuses a row value outside a comparison.
func errRowHere() error {
	return sqlerr.New(sqlerr.FeatureNotSupported, "row values are supported only in comparisons (=, <>, <, <=, >, >=, IN, IS [NOT] DISTINCT FROM, IS [NOT] NULL)").
		WithHint("Select or pass the fields as separate columns.")
}

// bindRowOperands binds the fields of both sides of a row comparison.
func (b *binder) bindRowOperands(opName string, l, r ast.ExprNode, s *scope) ([]expr.Expr, []expr.Expr, error) {
	lf, lok := rowFields(l)
	rf, rok := rowFields(r)
	switch {
	case lok && rok:
		if len(lf) != len(rf) {
			return nil, nil, sqlerr.New(sqlerr.SyntaxError, "unequal number of entries in row expressions")
		}
	case lok:
		if _, ok := r.(*ast.SubqueryExpr); !ok {
			return nil, nil, sqlerr.New(sqlerr.UndefinedFunction, "operator does not exist: record %s %s", opName, b.operandTypeName(r, s)).
				WithHint("Compare the row with a row of as many values, (a, b) = (1, 2), or with a subquery of as many columns.")
		}
	case rok:
		if _, ok := l.(*ast.SubqueryExpr); !ok {
			return nil, nil, sqlerr.New(sqlerr.UndefinedFunction, "operator does not exist: %s %s record", b.operandTypeName(l, s), opName).
				WithHint("Compare the row with a row of as many values, (a, b) = (1, 2), or with a subquery of as many columns.")
		}
	}
	width := len(lf)
	if !lok {
		width = len(rf)
	}
	ls, err := b.bindRowSide(l, width, s)
	if err != nil {
		return nil, nil, err
	}
	rs, err := b.bindRowSide(r, width, s)
	if err != nil {
		return nil, nil, err
	}
	return ls, rs, nil
}

// operandTypeName names the type of n in an operator error, or "unknown".
func (b *binder) operandTypeName(n ast.ExprNode, s *scope) string {
	inner := &binder{stmt: b.stmt, depth: b.depth, corr: b.corr, agg: b.agg}
	e, err := inner.bindExpr(n, s)
	if err != nil || e.Type() == types.Unknown {
		return "unknown"
	}
	return e.Type().String()
}

// bindRowSide binds one side of a row comparison of width fields: a row
// constructor's fields, or the columns of a subquery.
func (b *binder) bindRowSide(n ast.ExprNode, width int, s *scope) ([]expr.Expr, error) {
	if fields, ok := rowFields(n); ok {
		out := make([]expr.Expr, len(fields))
		for i, f := range fields {
			if isRowOperand(f) {
				return nil, sqlerr.New(sqlerr.FeatureNotSupported, "rows nested in rows are not supported").
					WithHint("Compare the inner row's fields as fields of the outer row.")
			}
			e, err := b.bindExpr(f, s)
			if err != nil {
				return nil, err
			}
			out[i] = e
		}
		return out, nil
	}
	sub := n.(*ast.SubqueryExpr)
	out := make([]expr.Expr, width)
	for i := range out {
		root, wrap, err := b.bindSubqueryPlan(sub.Query, s)
		if err != nil {
			return nil, err
		}
		cols := root.Schema()
		if len(cols) > width {
			return nil, sqlerr.New(sqlerr.SyntaxError, "subquery has too many columns")
		}
		if len(cols) < width {
			return nil, sqlerr.New(sqlerr.SyntaxError, "subquery has too few columns")
		}
		col := cols[i]
		one := &plan.Project{Input: root, Exprs: []expr.Expr{&expr.ColRef{Idx: i, Name: col.Name, T: col.Type}}, Cols: []types.Column{col}}
		out[i] = wrap(&expr.Subquery{Kind: expr.SubqueryScalar, Plan: one, T: col.Type})
	}
	return out, nil
}

// bindRowCompare binds l op r where a side is a row.
func (b *binder) bindRowCompare(op opcode.Op, l, r ast.ExprNode, s *scope) (expr.Expr, error) {
	name, ok := map[opcode.Op]string{
		opcode.EQ: "=", opcode.NE: "<>", opcode.LT: "<", opcode.LE: "<=", opcode.GT: ">", opcode.GE: ">=", opcode.NullEQ: "<=>",
	}[op]
	if !ok {
		return nil, errRowHere()
	}
	shown := name
	if name == "<=>" {
		shown = "IS NOT DISTINCT FROM"
	}
	ls, rs, err := b.bindRowOperands(shown, l, r, s)
	if err != nil {
		return nil, err
	}
	return b.rowCompare(name, ls, rs, s)
}

// rowCompare compares the bound fields ls and rs pairwise.
func (b *binder) rowCompare(op string, ls, rs []expr.Expr, s *scope) (expr.Expr, error) {
	pair := func(op string, i int) (expr.Expr, error) {
		l, r, err := b.bpcharOperands(op, ls[i], rs[i], s)
		if err != nil {
			return nil, err
		}
		return expr.Binary(op, l, r)
	}
	switch op {
	case "=", "<>", "<=>":
		join := "AND"
		if op == "<>" {
			join = "OR"
		}
		var out expr.Expr
		for i := range ls {
			c, err := pair(op, i)
			if err != nil {
				return nil, err
			}
			if out == nil {
				out = c
			} else if out, err = expr.Binary(join, out, c); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	// Ordering: built from the last field outwards, so that field i is
	// strict (or the operator itself for the last field) OR equal AND the
	// rest.
	strict := op[:1]
	out, err := pair(op, len(ls)-1)
	if err != nil {
		return nil, err
	}
	for i := len(ls) - 2; i >= 0; i-- {
		lt, err := pair(strict, i)
		if err != nil {
			return nil, err
		}
		eq, err := pair("=", i)
		if err != nil {
			return nil, err
		}
		rest, err := expr.Binary("AND", eq, out)
		if err != nil {
			return nil, err
		}
		if out, err = expr.Binary("OR", lt, rest); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// bindRowIsNull binds (a, b) IS [NOT] NULL: every field is (not) NULL.
func (b *binder) bindRowIsNull(fields []ast.ExprNode, not bool, s *scope) (expr.Expr, error) {
	var out expr.Expr
	for _, f := range fields {
		if isRowOperand(f) {
			return nil, errRowHere()
		}
		v, err := b.bindExpr(f, s)
		if err != nil {
			return nil, err
		}
		c := expr.IsNull(v, not)
		if out == nil {
			out = c
		} else if out, err = expr.Binary("AND", out, c); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// bindRowIn binds (a, b) [NOT] IN ((1, 2), ...): the OR of the row
// equalities, negated for NOT IN.
func (b *binder) bindRowIn(n *ast.PatternInExpr, s *scope) (expr.Expr, error) {
	terms := make([]expr.Expr, len(n.List))
	for i, item := range n.List {
		eq, err := b.bindRowCompare(opcode.EQ, n.Expr, item, s)
		if err != nil {
			return nil, err
		}
		terms[i] = eq
	}
	// ORed as a balanced tree, as expr.In does, so that a long list
	// nests only log2(len) deep.
	for len(terms) > 1 {
		next := terms[:0:0]
		for i := 0; i < len(terms); i += 2 {
			if i+1 == len(terms) {
				next = append(next, terms[i])
				continue
			}
			or, err := expr.Binary("OR", terms[i], terms[i+1])
			if err != nil {
				return nil, err
			}
			next = append(next, or)
		}
		terms = next
	}
	out := terms[0]
	if n.Not {
		return expr.Not(out)
	}
	return out, nil
}

// bindRowQuantified binds (a, b) [NOT] IN (SELECT x, y ...) (and = ANY,
// <> ALL) as one correlated aggregate subquery over the subquery's
// rows: max of 2 for a row whose fields all equal, 1 for one whose
// equality is NULL, 0 otherwise. 2 is true, 1 is NULL and 0 or no rows
// false, which are SQL's rules for IN. The other quantified comparisons
// of rows are refused, and so is this form in a materialized view
// (refuseRowIn).
func (b *binder) bindRowQuantified(name string, left ast.ExprNode, q ast.ResultSetNode, s *scope) (expr.Expr, error) {
	not := false
	switch name {
	case expr.InSubquery, expr.Quantifier("=", false):
	case expr.NotInSubquery, expr.Quantifier("<>", true):
		not = true
	default:
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "a row compared with a subquery's rows by an ordering operator with ANY or ALL is not supported").
			WithHint("Compare the fields one by one in an EXISTS (SELECT FROM ... WHERE ...).")
	}
	fields, _ := rowFields(left)
	ls := make([]expr.Expr, len(fields))
	for i, f := range fields {
		if isRowOperand(f) {
			return nil, errRowHere()
		}
		e, err := b.bindExpr(f, s)
		if err != nil {
			return nil, err
		}
		ls[i] = e
	}
	if b.stmt == nil || b.stmt.subquery == nil {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "subqueries are not supported here yet")
	}
	c := &correlation{b: b, outer: s}
	root, err := b.stmt.subquery(q, c)
	if err != nil {
		return nil, err
	}
	cols := root.Schema()
	if len(cols) > len(ls) {
		return nil, sqlerr.New(sqlerr.SyntaxError, "subquery has too many columns")
	}
	if len(cols) < len(ls) {
		return nil, sqlerr.New(sqlerr.SyntaxError, "subquery has too few columns")
	}
	var eq expr.Expr
	for i, l := range ls {
		if l.Type() == types.Unknown {
			if l, err = expr.Cast(l, cols[i].Type); err != nil {
				return nil, err
			}
		}
		c.refs = append(c.refs, l)
		c.keys = append(c.keys, "row field "+strconv.Itoa(i))
		outer := &expr.OuterRef{N: len(c.refs) - 1, T: l.Type(), Name: l.String()}
		inner := &expr.ColRef{Idx: i, Name: cols[i].Name, T: cols[i].Type}
		one, err := expr.Binary("=", inner, outer)
		if err != nil {
			return nil, err
		}
		if eq == nil {
			eq = one
		} else if eq, err = expr.Binary("AND", eq, one); err != nil {
			return nil, err
		}
	}
	num := func(n int64) expr.Expr { return &expr.Const{D: types.NewInt(n), T: types.Int8} }
	grade, err := expr.Case([]expr.Expr{eq, expr.IsNull(eq, false)}, []expr.Expr{num(2), num(1)}, num(0))
	if err != nil {
		return nil, err
	}
	agg := &plan.Aggregate{Input: root, Aggs: []plan.AggCall{{Func: "max", Arg: grade, T: types.Int8}},
		Cols: []types.Column{{Name: "max", Type: types.Int8}}}
	sub := expr.Correlate(&expr.Subquery{Kind: expr.SubqueryScalar, Plan: agg, T: types.Int8, Text: subqueryText(q), RowIn: true}, c.refs)
	is := func(n int64) (expr.Expr, error) { return expr.Binary("=", sub, num(n)) }
	isTrue, err := is(2)
	if err != nil {
		return nil, err
	}
	isNull, err := is(1)
	if err != nil {
		return nil, err
	}
	in, err := expr.Case([]expr.Expr{isTrue, isNull}, []expr.Expr{
		&expr.Const{D: types.NewBool(true), T: types.Bool}, &expr.Const{D: types.Null, T: types.Bool}},
		&expr.Const{D: types.NewBool(false), T: types.Bool})
	if err != nil || !not {
		return in, err
	}
	return expr.Not(in)
}

// refuseRowIn refuses a row [NOT] IN (SELECT ...) in the plan of a
// materialized view: its aggregate reads the outer row's values, which a
// view cannot decorrelate.
func refuseRowIn(root plan.Node) error {
	var found *expr.Subquery
	MapPlan(root, func(e expr.Expr) (expr.Expr, error) {
		if e != nil && found == nil {
			expr.Visit(e, func(x expr.Expr) {
				if s, ok := x.(*expr.Subquery); ok && s.RowIn && found == nil {
					found = s
				}
			})
		}
		return e, nil
	}, nil)
	if found == nil {
		return nil
	}
	return sqlerr.New(sqlerr.FeatureNotSupported, "a row compared with a subquery's rows by IN, = ANY or <> ALL is not supported in a materialized view: %s", found.Text).
		WithHint("Write EXISTS (SELECT FROM ... WHERE x = a AND y = b), which a view runs as a semi join.")
}

// expandRowOrderBy returns sel with each ORDER BY item that is a row
// replaced by its fields in the item's direction: PostgreSQL sorts rows
// field by field, a NULL field after the others ascending and before
// them descending, as each field sorts by itself. NULLS FIRST or LAST
// on a row (which the front layer writes as a leading (row) IS NULL
// item) is refused: it would place rows of NULL fields as PostgreSQL
// does not. With DISTINCT ON, a row item is not a DISTINCT ON
// expression, which PostgreSQL refuses (42P10) as such.
func expandRowOrderBy(sel *ast.SelectStmt, distinctOn bool) (*ast.SelectStmt, error) {
	if sel.OrderBy == nil {
		return sel, nil
	}
	var items []*ast.ByItem
	changed := false
	for _, item := range sel.OrderBy.Items {
		if n, ok := item.Expr.(*ast.IsNullExpr); ok && isRowOperand(n.Expr) {
			return nil, sqlerr.New(sqlerr.FeatureNotSupported, "NULLS FIRST and NULLS LAST on a row in ORDER BY are not supported").
				WithHint("Order by the row's fields, each with its own NULLS FIRST or LAST.")
		}
		fields, ok := rowFields(item.Expr)
		if !ok {
			items = append(items, item)
			continue
		}
		if distinctOn {
			return nil, sqlerr.New(sqlerr.InvalidColumnReference, "SELECT DISTINCT ON expressions must match initial ORDER BY expressions")
		}
		changed = true
		for _, f := range fields {
			if isRowOperand(f) {
				return nil, errRowHere()
			}
			items = append(items, &ast.ByItem{Expr: f, Desc: item.Desc, NullOrder: item.NullOrder})
		}
	}
	if !changed {
		return sel, nil
	}
	out := *sel
	out.OrderBy = &ast.OrderByClause{Items: items, ForUnion: sel.OrderBy.ForUnion}
	return &out, nil
}
