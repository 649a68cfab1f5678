package sql

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"streamdb/binder"
	"streamdb/expr"
	"streamdb/pgwire"
	"streamdb/sqlerr"
	"streamdb/types"
)

// returning is a bound RETURNING list of an INSERT, UPDATE or DELETE: its
// expressions read a written row of the target relation (the new row of an
// INSERT or UPDATE, the removed row of a DELETE). A statement with one
// answers its rows with a RowDescription as a query does; the command tag
// stays the statement's (INSERT 0 n, UPDATE n, DELETE n).
type returning struct {
	cols  []types.Column
	exprs []expr.Expr
}

// bindReturning binds fields against the target's columns, named alias in
// the list (the table's name or its alias). It returns nil when fields is
// nil.
func bindReturning(fields []*ast.SelectField, alias string, cols []types.Column, params *binder.Params) (*returning, error) {
	return bindReturningIn(fields, binder.TableScope(alias, cols), params)
}

// bindReturningIn binds fields against the columns of sc: the target's,
// and after them those of UPDATE's FROM (DELETE's USING) list.
func bindReturningIn(fields []*ast.SelectField, sc *binder.Scope, params *binder.Params) (*returning, error) {
	if fields == nil {
		return nil, nil
	}
	// The list was parsed on its own: its nodes' offsets are in its text.
	b := binder.NewExprBinder(params.WithStatement(params.Statement().ReturningStatement()))
	all := sc.Columns()
	r := &returning{}
	for _, f := range fields {
		if f.WildCard != nil {
			refs, cols, ok := sc.Expand(f.WildCard.Table.O)
			if !ok {
				return nil, sqlerr.New(sqlerr.UndefinedTable, "missing FROM-clause entry for table %q", f.WildCard.Table.O)
			}
			r.cols = append(r.cols, cols...)
			r.exprs = append(r.exprs, refs...)
			continue
		}
		e, err := b.Bind(f.Expr, sc)
		if err != nil {
			if se, ok := err.(*sqlerr.Error); ok && se.Code == sqlerr.GroupingError && strings.HasPrefix(se.Message, "aggregate function") {
				// PostgreSQL names the clause.
				return nil, sqlerr.New(sqlerr.GroupingError, "aggregate functions are not allowed in RETURNING").
					WithPosition(se.Position)
			}
			return nil, err
		}
		col := types.Column{Name: f.AsName.O, Type: e.Type()}
		if col.Name == "" {
			col.Name = binder.ColumnName(f.Expr)
		}
		if ref, ok := e.(*expr.ColRef); ok && ref.Idx < len(all) {
			col.Mod = all[ref.Idx].Mod
		}
		r.cols = append(r.cols, col)
		r.exprs = append(r.exprs, e)
	}
	return r, nil
}

// columns is the RowDescription of a statement with RETURNING; nil (no
// rows) without one.
func (r *returning) columns() []types.Column {
	if r == nil {
		return nil
	}
	return r.cols
}

// write answers the RETURNING rows of the written rows, in order.
func (r *returning) write(w pgwire.RowWriter, rows []types.Row) error {
	if r == nil {
		return nil
	}
	for _, row := range rows {
		out := make(types.Row, len(r.exprs))
		for i, e := range r.exprs {
			v, err := e.Eval(row)
			if err != nil {
				return err
			}
			out[i] = v
		}
		if err := w.WriteRow(out); err != nil {
			return err
		}
	}
	return nil
}
