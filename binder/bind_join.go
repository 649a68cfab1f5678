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

// stripFullJoinMarker recognises the front layer's spelling of FULL JOIN:
// LEFT JOIN ... ON streamdb_full_join() AND (cond).
func stripFullJoinMarker(on ast.ExprNode) (ast.ExprNode, bool) {
	isMarker := func(n ast.ExprNode) bool {
		f, ok := n.(*ast.FuncCallExpr)
		return ok && f.FnName.L == front.FullJoinFunc
	}
	if isMarker(on) {
		return nil, true
	}
	b, ok := on.(*ast.BinaryOperationExpr)
	if !ok || b.Op != opcode.LogicAnd {
		return on, false
	}
	if isMarker(b.L) {
		return b.R, true
	}
	if rest, ok := stripFullJoinMarker(b.L); ok {
		if rest == nil {
			return b.R, true
		}
		return &ast.BinaryOperationExpr{Op: opcode.LogicAnd, L: rest, R: b.R}, true
	}
	return on, false
}

// conjuncts splits an AND tree.
func conjuncts(n ast.ExprNode) []ast.ExprNode {
	if p, ok := n.(*ast.ParenthesesExpr); ok {
		return conjuncts(p.Expr)
	}
	if b, ok := n.(*ast.BinaryOperationExpr); ok && b.Op == opcode.LogicAnd {
		return append(conjuncts(b.L), conjuncts(b.R)...)
	}
	return []ast.ExprNode{n}
}

// bindJoin splits ON into equi-join keys (a = b with a over one side and b
// over the other) and a residual condition over the joined row.
func (sb *selectBinder) bindJoin(kind plan.JoinKind, left plan.Node, ls *scope, right plan.Node, rs *scope, on ast.ExprNode) (plan.Node, *scope, error) {
	joined := &scope{cols: append(append([]scopeColumn{}, ls.cols...), rs.cols...)}
	b := &binder{stmt: sb.params, corr: sb.corr}
	j := &plan.Join{Kind: kind, Left: left, Right: right}
	j.Cols = append(append([]types.Column{}, left.Schema()...), right.Schema()...)
	var residual expr.Expr
	if on != nil {
		if containsAgg(on) {
			return nil, nil, sqlerr.New(sqlerr.GroupingError, "aggregate functions are not allowed in JOIN conditions")
		}
		for _, c := range conjuncts(on) {
			if eq, ok := c.(*ast.BinaryOperationExpr); ok && eq.Op == opcode.EQ {
				lk, rk, ok, err := sb.equiKey(b, eq, ls, rs)
				if err != nil {
					return nil, nil, err
				}
				if ok {
					j.LeftKeys = append(j.LeftKeys, lk)
					j.RightKeys = append(j.RightKeys, rk)
					continue
				}
			}
			e, err := b.bindExpr(c, joined)
			if err != nil {
				return nil, nil, err
			}
			if e, err = BooleanCondition(e, "JOIN/ON"); err != nil {
				return nil, nil, err
			}
			if residual == nil {
				residual = e
			} else if residual, err = expr.Binary("AND", residual, e); err != nil {
				return nil, nil, err
			}
		}
	} else if kind != plan.InnerJoin {
		return nil, nil, sqlerr.New(sqlerr.SyntaxError, "%s JOIN needs an ON condition", kind)
	}
	j.Cond = residual
	return j, joined, nil
}

// equiKey binds l = r as a join key when one side refers only to the left
// input and the other only to the right one.
func (sb *selectBinder) equiKey(b *binder, eq *ast.BinaryOperationExpr, ls, rs *scope) (expr.Expr, expr.Expr, bool, error) {
	try := func(a, c ast.ExprNode) (expr.Expr, expr.Expr, bool) {
		le, err1 := (&binder{stmt: sb.params}).bindExpr(a, ls)
		re, err2 := (&binder{stmt: sb.params}).bindExpr(c, rs)
		if err1 != nil || err2 != nil || expr.IsConstant(le) || expr.IsConstant(re) {
			return nil, nil, false
		}
		return le, re, true
	}
	le, re, ok := try(eq.L, eq.R)
	if !ok {
		if le, re, ok = try(eq.R, eq.L); !ok {
			return nil, nil, false, nil
		}
	}
	// A character(n) key compares with character varying as bpchar does.
	kb := &binder{stmt: sb.params}
	lf, rf := kb.fixedMod(le, ls).Fixed, kb.fixedMod(re, rs).Fixed
	var err error
	if rf {
		if le, err = kb.asBpchar(le, ls); err != nil {
			return nil, nil, false, err
		}
	}
	if lf {
		if re, err = kb.asBpchar(re, rs); err != nil {
			return nil, nil, false, err
		}
	}
	// Compare in a common type, as = would.
	t, err := expr.CommonType([]types.Type{le.Type(), re.Type()})
	if err != nil {
		return nil, nil, false, sqlerr.New(sqlerr.UndefinedFunction, "operator does not exist: %s = %s", le.Type(), re.Type())
	}
	if t.IsInteger() {
		t = types.Int8 // keys of mixed integer widths must encode alike
	}
	if le, err = expr.Cast(le, t); err != nil {
		return nil, nil, false, err
	}
	if re, err = expr.Cast(re, t); err != nil {
		return nil, nil, false, err
	}
	return le, re, true, nil
}
