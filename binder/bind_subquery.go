package binder

import (
	"fmt"

	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/format"
	"github.com/pingcap/tidb/pkg/parser/opcode"

	"streamdb/expr"
	"streamdb/plan"
	"streamdb/sqlerr"
	"streamdb/types"
)

// Subqueries in expressions (scalar, EXISTS, IN, op ANY/ALL) of ad-hoc
// queries. Each is bound as a plan of its own, in its own scope: its
// aggregates are its own, and a column its FROM does not have is looked
// up in the query around it (correlation). Such an outer column becomes
// an expr.OuterRef in the subquery's plan and the subquery is wrapped by
// expr.Correlate with the outer values; resolveSubqueries runs an
// uncorrelated subquery once and a correlated one once per distinct set
// of outer values.

// correlation is the query around a subquery being bound: b binds over
// outer, the scope of the expression the subquery stands in, and refs are
// the outer values the subquery refers to (OuterRef N is refs[N]).
type correlation struct {
	b     *binder
	outer *scope
	refs  []expr.Expr
	keys  []string
	// refuse makes a reference to the outer query an error, kept in
	// refused: the FROM list of UPDATE ... FROM (DELETE ... USING) may
	// not read the target (refuseOuter).
	refuse  bool
	refused error
}

// resolve binds column n in the outer query. ok is false when the outer
// query does not have it either (the caller reports the column as
// unknown); an error with ok true is the outer query's (a column that is
// not grouped there, say).
func (c *correlation) resolve(n *ast.ColumnNameExpr) (expr.Expr, bool, error) {
	e, err := c.b.bindExpr(n, c.outer)
	if err == nil && c.refuse {
		return nil, true, c.refuseOuter(n)
	}
	if err != nil {
		if c := sqlerr.Code(err); c == sqlerr.UndefinedColumn || c == sqlerr.UndefinedTable {
			return nil, false, nil
		}
		if sqlerr.Code(err) == sqlerr.GroupingError {
			name := n.Name.Name.O
			if n.Name.Table.O != "" {
				name = n.Name.Table.O + "." + name
			}
			return nil, true, sqlerr.New(sqlerr.GroupingError, "subquery uses ungrouped column %q from outer query", name)
		}
		return nil, true, err
	}
	var key string
	switch x := e.(type) {
	case *expr.ColRef:
		key = fmt.Sprintf("col %d", x.Idx)
	case *expr.OuterRef:
		key = fmt.Sprintf("outer %d", x.N)
	default:
		key = e.String()
	}
	name := n.Name.Name.O
	if n.Name.Table.O != "" {
		name = n.Name.Table.O + "." + name
	}
	for i, k := range c.keys {
		if k == key {
			return &expr.OuterRef{N: i, T: e.Type(), Name: name}, true, nil
		}
	}
	c.refs = append(c.refs, e)
	c.keys = append(c.keys, key)
	return &expr.OuterRef{N: len(c.refs) - 1, T: e.Type(), Name: name}, true, nil
}

// refuseOuter is the error of a reference n to the outer query where
// none may be (PostgreSQL's words), kept in c.refused: a subquery that
// holds n reports a missing column or table when the reference fails,
// and the caller reports this error instead.
func (c *correlation) refuseOuter(n *ast.ColumnNameExpr) error {
	var err *sqlerr.Error
	if t := n.Name.Table.O; t != "" {
		err = sqlerr.New(sqlerr.UndefinedTable, "invalid reference to FROM-clause entry for table %q", t).
			WithHint("There is an entry for table %q, but it cannot be referenced from this part of the query.", t)
	} else {
		col := n.Name.Name.O
		table := ""
		if i, rerr := c.outer.resolve("", col); rerr == nil {
			table = c.outer.cols[i].table
		}
		err = sqlerr.New(sqlerr.UndefinedColumn, "column %q does not exist", col).
			WithHint("There is a column named %q in table %q, but it cannot be referenced from this part of the query.", col, table)
	}
	if c.refused == nil {
		c.refused = c.b.stmt.at(n, err)
	}
	return c.refused
}

// bindSubqueryPlan binds the query of a subquery with the statement's
// subquery binder; outer is the scope of the expression it stands in.
// wrap turns the bound subquery into the expression that stands in its
// place: the subquery itself, or a Correlate call when it refers to the
// outer query.
func (b *binder) bindSubqueryPlan(q ast.ResultSetNode, outer *scope) (plan.Node, func(*expr.Subquery) expr.Expr, error) {
	if b.stmt == nil || b.stmt.subquery == nil {
		return nil, nil, sqlerr.New(sqlerr.FeatureNotSupported, "subqueries are not supported here yet")
	}
	c := &correlation{b: b, outer: outer}
	root, err := b.stmt.subquery(q, c)
	if err != nil {
		return nil, nil, err
	}
	wrap := func(s *expr.Subquery) expr.Expr {
		s.Text = subqueryText(q)
		if len(c.refs) == 0 {
			return s
		}
		return expr.Correlate(s, c.refs)
	}
	return root, wrap, nil
}

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
	root, wrap, err := b.bindSubqueryPlan(sub.Query, s)
	if err != nil {
		return nil, err
	}
	if exists {
		e := wrap(&expr.Subquery{Kind: expr.SubqueryExists, Plan: root, T: types.Bool})
		if not {
			return expr.Not(e)
		}
		return e, nil
	}
	cols := root.Schema()
	if len(cols) != 1 {
		return nil, sqlerr.New(sqlerr.SyntaxError, "subquery must return only one column")
	}
	return wrap(&expr.Subquery{Kind: expr.SubqueryScalar, Plan: root, T: cols[0].Type}), nil
}

// bindInSubquery binds x [NOT] IN (SELECT y ...).
func (b *binder) bindInSubquery(n *ast.PatternInExpr, s *scope) (expr.Expr, error) {
	sub, ok := n.Sel.(*ast.SubqueryExpr)
	if !ok {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "IN needs a list or a subquery")
	}
	name := expr.InSubquery
	if n.Not {
		name = expr.NotInSubquery
	}
	return b.bindQuantified(name, n.Expr, sub.Query, s)
}

// quantifiedOps are the comparisons x op ANY/ALL (SELECT ...) accepts.
var quantifiedOps = map[opcode.Op]string{
	opcode.EQ: "=", opcode.NE: "<>", opcode.LT: "<", opcode.LE: "<=", opcode.GT: ">", opcode.GE: ">=",
}

// bindCompareSubquery binds x op ANY (SELECT ...), SOME and ALL.
func (b *binder) bindCompareSubquery(n *ast.CompareSubqueryExpr, s *scope) (expr.Expr, error) {
	sub, ok := n.R.(*ast.SubqueryExpr)
	if !ok {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "ANY and ALL need a subquery or an array")
	}
	op, ok := quantifiedOps[n.Op]
	if !ok {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "operator %s is not supported with ANY or ALL", n.Op)
	}
	return b.bindQuantified(expr.Quantifier(op, n.All), n.L, sub.Query, s)
}

// bindQuantified binds the quantified comparison name of left with the
// one column of subquery q.
func (b *binder) bindQuantified(name string, left ast.ExprNode, q ast.ResultSetNode, s *scope) (expr.Expr, error) {
	if isRowOperand(left) {
		return b.bindRowQuantified(name, left, q, s)
	}
	l, err := b.bindExpr(left, s)
	if err != nil {
		return nil, err
	}
	root, wrap, err := b.bindSubqueryPlan(q, s)
	if err != nil {
		return nil, err
	}
	cols := root.Schema()
	if len(cols) != 1 {
		if len(cols) > 1 {
			return nil, sqlerr.New(sqlerr.SyntaxError, "subquery has too many columns")
		}
		return nil, sqlerr.New(sqlerr.SyntaxError, "subquery has too few columns")
	}
	if l.Type() == types.Unknown {
		if l, err = expr.Cast(l, cols[0].Type); err != nil {
			return nil, err
		}
	}
	// The comparison is checked now, so that a type mismatch fails at
	// PREPARE.
	return expr.Quantified(name, l, wrap(&expr.Subquery{Kind: expr.SubqueryIn, Plan: root, T: cols[0].Type}))
}

// isSubqueryNode reports whether n is a subquery expression, which binds
// in its own scope (never as a group key of the query around it).
func isSubqueryNode(n ast.ExprNode) bool {
	switch n := n.(type) {
	case *ast.SubqueryExpr, *ast.ExistsSubqueryExpr, *ast.CompareSubqueryExpr:
		return true
	case *ast.PatternInExpr:
		return n.Sel != nil
	}
	return false
}

// subqueryText is the SQL of a subquery as parsed, which names it in
// EXPLAIN and tells two subqueries apart where expressions are matched by
// their text (ORDER BY items, group keys).
func subqueryText(q ast.ResultSetNode) string {
	var sb strings.Builder
	if err := q.Restore(format.NewRestoreCtx(format.RestoreStringSingleQuotes|format.RestoreStringWithoutCharset|format.RestoreKeyWordUppercase|format.RestoreNameDoubleQuotes, &sb)); err != nil {
		return fmt.Sprintf("subquery %p", q)
	}
	return sb.String()
}

// checkAggLevel refuses an aggregate of a subquery whose argument names
// only outer columns: SQL makes it an aggregate of the outer query, which
// streamdb does not bind.
func checkAggLevel(fn string, arg expr.Expr) error {
	outer, local := false, false
	expr.Visit(arg, func(x expr.Expr) {
		switch x.(type) {
		case *expr.OuterRef:
			outer = true
		case *expr.ColRef:
			local = true
		}
	})
	if outer && !local {
		return sqlerr.New(sqlerr.FeatureNotSupported, "aggregate %s over only outer columns in a subquery is not supported", fn).
			WithHint("Compute the aggregate in the outer query, or give it a column of the subquery's FROM.")
	}
	return nil
}

// groupedBySubquery reports whether a GROUP BY key holds a subquery.
func (a *aggContext) groupedBySubquery() bool {
	for _, g := range a.groupKeys {
		if HasSubquery(g) {
			return true
		}
	}
	return false
}
