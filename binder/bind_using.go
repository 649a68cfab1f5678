package binder

import (
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/opcode"

	"streamdb/expr"
	"streamdb/front"
	"streamdb/plan"
	"streamdb/sqlerr"
	"streamdb/types"
)

// usingNames reads a USING list: its column names, and the join's alias
// (USING (x) AS j) that front appends as a name qualified by
// front.UsingAliasTable.
func usingNames(cols []*ast.ColumnName) (names []string, alias string, err error) {
	for _, c := range cols {
		switch {
		case c.Table.L == front.UsingAliasTable && c.Schema.L == "":
			alias = c.Name.O
		case c.Table.L != "" || c.Schema.L != "":
			return nil, "", sqlerr.New(sqlerr.SyntaxError, "syntax error in USING: write column names")
		default:
			names = append(names, c.Name.L)
		}
	}
	return names, alias, nil
}

// bindUsingAs is bindUsing whose merged columns are also reachable as
// alias.name (and alias.*), as PostgreSQL's USING (x) AS alias makes them;
// unqualified names still reach them.
func (sb *selectBinder) bindUsingAs(kind plan.JoinKind, left plan.Node, ls *scope, right plan.Node, rs *scope, names []string, alias string, natural bool) (plan.Node, *scope, error) {
	n, sc, err := sb.bindUsing(kind, left, ls, right, rs, names, natural)
	if err != nil || alias == "" {
		return n, sc, err
	}
	for i := range names {
		sc.cols[i].table = alias
	}
	return n, sc, nil
}

// bindUsing binds left JOIN right USING (names) and NATURAL JOIN (names
// are then the column names both sides have, in the left side's order).
// The join is on the equality of each named pair; its output starts with
// one merged column per name (the left value, the right one for a RIGHT
// JOIN, the first non-NULL of both for a FULL JOIN, in the pair's common
// type), then the other columns of the left and of the right side. The
// pairs stay in the row as hidden columns, so that a qualified name
// (l.x) and l.* still reach them, as in PostgreSQL.
func (sb *selectBinder) bindUsing(kind plan.JoinKind, left plan.Node, ls *scope, right plan.Node, rs *scope, names []string, natural bool) (plan.Node, *scope, error) {
	if natural {
		for _, lc := range ls.cols {
			if lc.hidden {
				continue
			}
			for _, rc := range rs.cols {
				if !rc.hidden && rc.name == lc.name {
					names = append(names, lc.name)
					break
				}
			}
		}
	}
	seen := map[string]bool{}
	var on ast.ExprNode
	for _, n := range names {
		if seen[n] {
			return nil, nil, sqlerr.New(sqlerr.DuplicateColumn, "column name %q appears more than once in USING clause", n)
		}
		seen[n] = true
		for _, side := range []struct {
			name string
			s    *scope
		}{{"left", ls}, {"right", rs}} {
			if _, err := side.s.resolve("", n); err != nil {
				if sqlerr.Code(err) == sqlerr.UndefinedColumn {
					return nil, nil, sqlerr.New(sqlerr.UndefinedColumn, "column %q specified in USING clause does not exist in %s table", n, side.name)
				}
				return nil, nil, sqlerr.New(sqlerr.AmbiguousColumn, "common column name %q appears more than once in %s table", n, side.name)
			}
		}
	}
	// Join ON l.x = r.x AND ...: the columns are named by position, so
	// that unnamed (or duplicate) qualifiers do not matter.
	width := len(ls.cols)
	lq := &scope{cols: append([]scopeColumn{}, ls.cols...)}
	rq := &scope{cols: append([]scopeColumn{}, rs.cols...)}
	type pair struct{ l, r int }
	pairs := make([]pair, len(names))
	for i, n := range names {
		li, _ := ls.resolve("", n)
		ri, _ := rs.resolve("", n)
		pairs[i] = pair{li, ri}
		lq.cols[li].table, rq.cols[ri].table = "streamdb_using_left", "streamdb_using_right"
		eq := &ast.BinaryOperationExpr{Op: opcode.EQ,
			L: &ast.ColumnNameExpr{Name: &ast.ColumnName{Table: ast.NewCIStr("streamdb_using_left"), Name: ast.NewCIStr(n)}},
			R: &ast.ColumnNameExpr{Name: &ast.ColumnName{Table: ast.NewCIStr("streamdb_using_right"), Name: ast.NewCIStr(n)}}}
		if on == nil {
			on = eq
		} else {
			on = &ast.BinaryOperationExpr{Op: opcode.LogicAnd, L: on, R: eq}
		}
	}
	if on == nil {
		// NATURAL JOIN of inputs without a common column is a cross join.
		on = ast.NewValueExpr(true, "", "")
	}
	joinNode, joined, err := sb.bindJoin(kind, left, lq, right, rq, on)
	if err != nil {
		return nil, nil, err
	}
	// Restore the qualifiers the ON clause was bound with.
	for i := range joined.cols {
		if i < width {
			joined.cols[i].table = ls.cols[i].table
		} else {
			joined.cols[i].table = rs.cols[i-width].table
		}
	}
	in := joinNode.Schema()
	var exprs []expr.Expr
	var cols []types.Column
	var sc []scopeColumn
	merged := map[int]bool{}
	for i, p := range pairs {
		l := expr.Expr(&expr.ColRef{Idx: p.l, Name: in[p.l].Name, T: in[p.l].Type})
		r := expr.Expr(&expr.ColRef{Idx: width + p.r, Name: in[width+p.r].Name, T: in[width+p.r].Type})
		t, err := expr.CommonType([]types.Type{l.Type(), r.Type()})
		if err != nil {
			return nil, nil, sqlerr.New(sqlerr.DatatypeMismatch, "JOIN/USING types %s and %s cannot be matched", l.Type(), r.Type())
		}
		if l, err = expr.Cast(l, t); err != nil {
			return nil, nil, err
		}
		if r, err = expr.Cast(r, t); err != nil {
			return nil, nil, err
		}
		var e expr.Expr
		switch kind {
		case plan.RightJoin:
			e = r
		case plan.FullJoin:
			if e, err = expr.Coalesce([]expr.Expr{l, r}); err != nil {
				return nil, nil, err
			}
		default:
			e = l
		}
		exprs = append(exprs, e)
		cols = append(cols, types.Column{Name: names[i], Type: t})
		source := joined.cols[p.l].qualifier()
		if kind == plan.RightJoin {
			source = joined.cols[width+p.r].qualifier()
		}
		sc = append(sc, scopeColumn{name: names[i], typ: t, source: source})
		merged[p.l], merged[width+p.r] = true, true
	}
	for i, c := range joined.cols {
		c.hidden = c.hidden || merged[i]
		exprs = append(exprs, &expr.ColRef{Idx: i, Name: in[i].Name, T: in[i].Type})
		cols = append(cols, in[i])
		sc = append(sc, c)
	}
	return &plan.Project{Input: joinNode, Exprs: exprs, Cols: cols}, &scope{cols: sc}, nil
}
