package sql

import (
	"strings"
	"time"

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

// bindReturningOver binds fields against the columns of sc (the
// target's, and after them those of UPDATE's FROM or DELETE's USING
// list), with their subqueries bound against cat (nil: refused, 0A000).
// Such a subquery, uncorrelated or correlated with the returned row,
// reads what the statement's other subqueries read: the tables as they
// were before the statement (or as the block saw them), as in
// PostgreSQL, so the statement resolves it with them and evaluates it
// before its changes are visible.
func bindReturningOver(fields []*ast.SelectField, sc *binder.Scope, params *binder.Params, cat binder.Catalog) (*returning, error) {
	if fields == nil {
		return nil, nil
	}
	// The list was parsed on its own: its nodes' offsets are in its text.
	own := params.WithStatement(params.Statement().ReturningStatement())
	if cat != nil {
		defer own.SubqueriesIn(cat)()
	}
	b := binder.NewExprBinder(own)
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
	out, err := r.eval(rows)
	if err != nil {
		return err
	}
	return writeRows(w, out)
}

// eval is the RETURNING rows of the written rows, in order (none without
// a RETURNING list).
func (r *returning) eval(rows []types.Row) ([]types.Row, error) {
	if r == nil {
		return nil, nil
	}
	out := make([]types.Row, len(rows))
	for j, row := range rows {
		out[j] = make(types.Row, len(r.exprs))
		for i, e := range r.exprs {
			v, err := e.Eval(row)
			if err != nil {
				return nil, err
			}
			out[j][i] = v
		}
	}
	return out, nil
}

// writeRows answers rows, in order.
func writeRows(w pgwire.RowWriter, rows []types.Row) error {
	for _, row := range rows {
		if err := w.WriteRow(row); err != nil {
			return err
		}
	}
	return nil
}

// bound is r with the statement's parameter values vals and its time
// stmtTime bound into its expressions (nil without a RETURNING list).
func (r *returning) bound(vals []types.Datum, stmtTime time.Time) (*returning, error) {
	if r == nil {
		return nil, nil
	}
	exprs, err := bindSets(r.exprs, vals, stmtTime)
	if err != nil {
		return nil, err
	}
	return &returning{cols: r.cols, exprs: exprs}, nil
}

// withExprs is r reading exprs (r's, resolved) instead of its own.
func (r *returning) withExprs(exprs []expr.Expr) *returning {
	if r == nil {
		return nil
	}
	return &returning{cols: r.cols, exprs: exprs}
}

// expressions is r's expressions (nil without a RETURNING list).
func (r *returning) expressions() []expr.Expr {
	if r == nil {
		return nil
	}
	return r.exprs
}
