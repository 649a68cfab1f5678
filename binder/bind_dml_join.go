package binder

import (
	"github.com/pingcap/tidb/pkg/parser/ast"

	"streamdb/expr"
	"streamdb/plan"
	"streamdb/sqlerr"
	"streamdb/types"
)

// DMLJoin is the FROM list of UPDATE ... FROM, or the USING list of
// DELETE ... USING, with the statement's WHERE: the rows of the list
// that join one row of the target.
type DMLJoin struct {
	// Plan is the list's rows for which WHERE holds; the target's columns
	// are OuterRefs in it, and OuterRef N is Refs[N] over the target row.
	Plan plan.Node
	Refs []expr.Expr
	// List is the list's rows without the WHERE: it reads nothing of the
	// target (the list may not name it), so it can be read once for all
	// the target's rows.
	List plan.Node
	// Scope is the target's columns followed by the list's (Plan's
	// schema): what SET, RETURNING and Where read.
	Scope *Scope
	// Where is the WHERE bound over Scope (nil without one).
	Where expr.Expr
}

// BindDMLJoin binds the FROM (USING) list from and the WHERE where of a
// statement whose target's columns are target. A name both have is
// ambiguous; the list may not name the target's table again. Subqueries
// bind as the params allow (Params.SubqueriesIn).
func BindDMLJoin(cat Catalog, params *Params, from ast.ResultSetNode, where ast.ExprNode, target *Scope) (*DMLJoin, error) {
	outer := target.inner()
	corr := &correlation{b: &binder{stmt: params}, outer: outer}
	sb := &selectBinder{cat: cat, params: params, corr: corr}
	// The list is read as a FROM clause of its own: its ON conditions,
	// subqueries and LATERAL items may not read the target (42P01), so
	// Plan's only correlation with the target is the WHERE's.
	corr.refuse = true
	input, in, err := sb.bindFromItem(from)
	corr.refuse = false
	if corr.refused != nil {
		return nil, corr.refused
	}
	if err != nil {
		return nil, err
	}
	for _, c := range in.cols {
		if c.table != "" && outer.hasTable(c.table) {
			return nil, sqlerr.New(sqlerr.DuplicateAlias, "table name %q specified more than once", c.table)
		}
	}
	both := &scope{cols: append(append([]scopeColumn(nil), outer.cols...), in.cols...)}
	j := &DMLJoin{Plan: input, List: input, Scope: &Scope{both}}
	if where != nil {
		if containsAgg(where) {
			return nil, sqlerr.New(sqlerr.GroupingError, "aggregate functions are not allowed in WHERE")
		}
		b := &binder{stmt: params, corr: corr}
		cond, err := b.bindExpr(where, in)
		if err != nil {
			return nil, err
		}
		if cond, err = BooleanCondition(cond, "WHERE"); err != nil {
			return nil, err
		}
		j.Plan = plan.RewriteWhere(&plan.Filter{Input: input, Cond: cond}, nil)
		// Bound again over both, for the conjuncts that read only the
		// target: those choose the target rows the statement reads.
		if j.Where, err = (&binder{stmt: params}).bindExpr(where, both); err != nil {
			return nil, err
		}
	}
	j.Refs = corr.refs
	return j, nil
}

func (s *scope) hasTable(name string) bool {
	for _, c := range s.cols {
		if c.table == name {
			return true
		}
	}
	return false
}

// Expand is what * (table "") or table.* stands for in s: a column
// reference for each column, and the columns; false when table names no
// columns of s.
func (s *Scope) Expand(table string) ([]expr.Expr, []types.Column, bool) {
	var refs []expr.Expr
	var cols []types.Column
	for i, c := range s.inner().cols {
		if (table == "" && !c.hidden) || (table != "" && c.table == table) {
			refs = append(refs, &expr.ColRef{Idx: i, Name: c.name, T: c.typ})
			cols = append(cols, types.Column{Name: c.name, Type: c.typ, Mod: c.mod})
		}
	}
	return refs, cols, len(refs) > 0
}

// BindSubqueryColumn binds column col (0-based) of subquery q, which must
// return ncols columns, as a scalar subquery over sc: UPDATE's SET (a, b)
// = (SELECT ...), one assignment per column.
func (x *ExprBinder) BindSubqueryColumn(q ast.ResultSetNode, sc *Scope, col, ncols int) (expr.Expr, error) {
	root, wrap, err := x.b.bindSubqueryPlan(q, sc.inner())
	if err != nil {
		return nil, err
	}
	cols := root.Schema()
	if len(cols) != ncols || col >= ncols {
		return nil, sqlerr.New(sqlerr.SyntaxError, "number of columns does not match number of values")
	}
	c := cols[col]
	one := &plan.Project{Input: root, Exprs: []expr.Expr{&expr.ColRef{Idx: col, Name: c.Name, T: c.Type}}, Cols: []types.Column{c}}
	return wrap(&expr.Subquery{Kind: expr.SubqueryScalar, Plan: one, T: c.Type}), nil
}

// Columns are all the columns of s by position (a ColRef's Idx), the
// ones a JOIN ... USING merged included.
func (s *Scope) Columns() []types.Column {
	var cols []types.Column
	for _, c := range s.inner().cols {
		cols = append(cols, types.Column{Name: c.name, Type: c.typ, Mod: c.mod})
	}
	return cols
}
