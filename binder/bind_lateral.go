package binder

import (
	"fmt"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"streamdb/expr"
	"streamdb/plan"
	"streamdb/sqlerr"
	"streamdb/types"
)

// LATERAL subqueries in FROM of ad-hoc queries. A LATERAL derived table
// may name columns of the FROM items to its left; it is bound as a
// correlated subquery of those (OuterRef) and joined by LateralJoin,
// which runs it once per distinct outer values (sql/lateral_run.go).

// LateralJoin joins each row of Left with the rows Right gives for it:
// Right's OuterRef N is Outer[N] over the left row. Kind is inner or
// left; Cond is over the joined row (nil: true).
type LateralJoin struct {
	Kind  plan.JoinKind
	Left  plan.Node
	Right plan.Node
	Outer []expr.Expr
	Cond  expr.Expr
	Cols  []types.Column
}

func (l *LateralJoin) Schema() []types.Column { return l.Cols }
func (l *LateralJoin) Children() []plan.Node  { return []plan.Node{l.Left, l.Right} }
func (l *LateralJoin) Describe() string {
	outer := make([]string, len(l.Outer))
	for i, e := range l.Outer {
		outer[i] = e.String()
	}
	d := fmt.Sprintf("Lateral %s join (right side run per distinct %s)", l.Kind, strings.Join(outer, ", "))
	if l.Cond != nil {
		d += " on " + l.Cond.String()
	}
	return d
}

// outerLateral reports whether j is a RIGHT or FULL JOIN.
func outerLateral(j *ast.Join) bool {
	if j.Tp == ast.RightJoin {
		return true
	}
	if j.On != nil {
		_, full := stripFullJoinMarker(j.On.Expr)
		return full
	}
	return false
}

// errOuterLateral refuses a RIGHT or FULL JOIN LATERAL whose subquery
// refers to the FROM items before it, as PostgreSQL does.
func errOuterLateral() error {
	return sqlerr.New(sqlerr.InvalidColumnReference, "the combining JOIN type must be INNER or LEFT for a LATERAL reference").
		WithHint("Write LEFT JOIN LATERAL with the tables swapped, or join without LATERAL.")
}

// lateralRefers binds the subquery of ts as a LATERAL one over ls and
// reports whether it refers to ls.
func (sb *selectBinder) lateralRefers(ls *scope, ts *ast.TableSource) (bool, error) {
	c := &correlation{b: &binder{stmt: sb.params, corr: sb.corr}, outer: ls}
	inner := &selectBinder{cat: sb.cat, params: sb.params, ctes: sb.ctes, work: sb.work, corr: c, lateral: true}
	var err error
	switch src := ts.Source.(type) {
	case *ast.SelectStmt:
		_, err = inner.bindSelect(src)
	case *ast.SetOprStmt:
		_, err = inner.bindSetOpr(src)
	default:
		return false, sqlerr.New(sqlerr.FeatureNotSupported, "LATERAL needs a subquery")
	}
	return len(c.refs) > 0, err
}

// bindLateral binds left JOIN LATERAL (subquery) [ON ...] and left,
// LATERAL (subquery).
func (sb *selectBinder) bindLateral(j *ast.Join, left plan.Node, ls *scope, ts *ast.TableSource) (plan.Node, *scope, error) {
	kind := plan.InnerJoin
	switch j.Tp {
	case ast.LeftJoin:
		kind = plan.LeftJoin
	case ast.RightJoin:
		return nil, nil, errOuterLateral()
	}
	var on ast.ExprNode
	if j.On != nil {
		on = j.On.Expr
		if _, full := stripFullJoinMarker(on); full {
			return nil, nil, errOuterLateral()
		}
	}
	c := &correlation{b: &binder{stmt: sb.params, corr: sb.corr}, outer: ls}
	inner := &selectBinder{cat: sb.cat, params: sb.params, ctes: sb.ctes, work: sb.work, corr: c, lateral: true}
	var right plan.Node
	var err error
	switch src := ts.Source.(type) {
	case *ast.SelectStmt:
		right, err = inner.bindSelect(src)
	case *ast.SetOprStmt:
		right, err = inner.bindSetOpr(src)
	default:
		return nil, nil, sqlerr.New(sqlerr.FeatureNotSupported, "LATERAL needs a subquery")
	}
	if err != nil {
		return nil, nil, err
	}
	cols, err := renameColumns(right.Schema(), ts.ColumnNames, ts.AsName.O)
	if err != nil {
		return nil, nil, err
	}
	rs := scopeOf(ts.AsName.O, cols)
	if len(c.refs) == 0 {
		// Not correlated after all: an ordinary join.
		if j.NaturalJoin || len(j.Using) > 0 {
			var names []string
			for _, c := range j.Using {
				names = append(names, c.Name.L)
			}
			return sb.bindUsing(kind, left, ls, right, rs, names, j.NaturalJoin)
		}
		return sb.bindJoin(kind, left, ls, right, rs, on)
	}
	if j.NaturalJoin || len(j.Using) > 0 {
		return nil, nil, sqlerr.New(sqlerr.FeatureNotSupported, "NATURAL JOIN LATERAL and JOIN LATERAL ... USING are not supported; write the condition with ON")
	}
	joined := &scope{cols: append(append([]scopeColumn{}, ls.cols...), rs.cols...)}
	lj := &LateralJoin{Kind: kind, Left: left, Right: right, Outer: c.refs,
		Cols: append(append([]types.Column{}, left.Schema()...), cols...)}
	if on != nil {
		if containsAgg(on) {
			return nil, nil, sqlerr.New(sqlerr.GroupingError, "aggregate functions are not allowed in JOIN conditions")
		}
		b := &binder{stmt: sb.params, corr: sb.corr}
		cond, err := b.bindExpr(on, joined)
		if err != nil {
			return nil, nil, err
		}
		if cond, err = BooleanCondition(cond, "JOIN/ON"); err != nil {
			return nil, nil, err
		}
		lj.Cond = cond
	} else if kind != plan.InnerJoin {
		return nil, nil, sqlerr.New(sqlerr.SyntaxError, "%s JOIN needs an ON condition", kind)
	}
	return lj, joined, nil
}

// renameColumns applies a derived table's column list, AS s(a, b).
func renameColumns(cols []types.Column, names []ast.CIStr, alias string) ([]types.Column, error) {
	if len(names) == 0 {
		return cols, nil
	}
	if len(names) > len(cols) {
		return nil, sqlerr.New(sqlerr.InvalidColumnReference, "table %q has %d columns available but %d columns specified", alias, len(cols), len(names))
	}
	out := append([]types.Column(nil), cols...)
	for i, n := range names {
		out[i].Name = n.O
	}
	return out, nil
}
