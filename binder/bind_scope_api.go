package binder

import (
	"github.com/pingcap/tidb/pkg/parser/ast"

	"streamdb/expr"
	"streamdb/types"
)

// Scope is the row an expression bound with ExprBinder reads: the
// columns it may name. A nil *Scope has no columns.
type Scope struct{ s *scope }

// TableScope is the scope of a relation's columns under one name (the
// table or its alias).
func TableScope(alias string, cols []types.Column) *Scope { return &Scope{scopeOf(alias, cols)} }

// With is s and the columns cols under the name table after them (ON
// CONFLICT's excluded row): an unqualified name both have is ambiguous.
func (s *Scope) With(table string, cols []types.Column) *Scope {
	out := &scope{cols: append([]scopeColumn(nil), s.inner().cols...)}
	for _, c := range cols {
		out.cols = append(out.cols, scopeColumn{table: table, name: c.Name, typ: c.Type, mod: c.Mod})
	}
	return &Scope{out}
}

func (s *Scope) inner() *scope {
	if s == nil {
		return &scope{}
	}
	return s.s
}

// ExprBinder binds the expressions of one statement that are not part
// of a query: DML's VALUES, SET, WHERE and RETURNING, column defaults,
// CHECK constraints, ALTER COLUMN ... USING.
type ExprBinder struct{ b binder }

// NewExprBinder binds expressions with params (nil: a $n marker is a
// syntax error).
func NewExprBinder(params *Params) *ExprBinder { return &ExprBinder{binder{stmt: params}} }

// Bind binds node over the columns of sc.
func (x *ExprBinder) Bind(node ast.ExprNode, sc *Scope) (expr.Expr, error) {
	return x.b.bindExpr(node, sc.inner())
}

// IdentityNextval is nextval of an identity column's sequence seq (its
// quoted name), called through params' session: it needs no privilege
// on the sequence, as in PostgreSQL.
func IdentityNextval(params *Params, seq string) (expr.Expr, error) {
	b := &binder{stmt: params}
	return b.sequenceCall(identityNextval, []expr.Expr{&expr.Const{D: types.NewString(seq), T: types.Text}})
}
