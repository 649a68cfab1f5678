package sql

import (
	"context"
	"fmt"
	"time"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"streamdb/binder"
	"streamdb/catalog"
	"streamdb/expr"
	"streamdb/front"
	"streamdb/pgwire"
	"streamdb/sqlerr"
	"streamdb/types"
)

// INSERT ... ON CONFLICT (target) DO UPDATE SET ... [WHERE cond]: a
// proposed row whose arbiter key is held by a row of the table updates
// that row instead of being inserted, as PostgreSQL does. The SET
// expressions and the WHERE read the existing row under the target's
// name (or alias) and the proposed row as EXCLUDED; the new row is an
// UPDATE's (generated columns recomputed, the table's checks and foreign
// keys applied by the same path), so the statement's changes are inserts
// and delete/insert pairs. A row the statement inserted or updated is not
// updated again by a later proposed row (21000). Subqueries in SET and
// WHERE run inside the write (insert_upsert_subquery.go).

// upsert is the bound DO UPDATE of an INSERT. Its expressions are bound
// over the existing row followed by the proposed one (EXCLUDED).
type upsert struct {
	arb   map[string]bool // the arbiter keys, by constraint name
	sets  []expr.Expr     // by column; nil: unchanged
	where expr.Expr       // nil: every conflicting row is updated
	// subqueries reads what the subqueries in sets and where read; nil
	// when they have none (insert_upsert_subquery.go).
	subqueries *adHoc
}

// bindUpsert binds n's DO UPDATE (front.OnConflict.Update: its SET list
// and WHERE are n.OnDuplicate) on table desc, whose rows are called alias.
func (s *session) bindUpsert(n *ast.InsertStmt, desc *catalog.Descriptor, cols []types.Column, alias string, arb map[string]bool, params *binder.Params) (*upsert, error) {
	// An unqualified name of a column is ambiguous, as in PostgreSQL.
	sc := binder.TableScope(alias, cols).With("excluded", cols)
	// Subqueries bind as a query's do; those of the INSERT's own query
	// (INSERT ... SELECT, bound later) keep the binder they get there.
	defer params.SubqueriesIn(bindCatalog{s.e})()
	b := binder.NewExprBinder(params)
	up := &upsert{arb: arb, sets: make([]expr.Expr, len(cols))}
	for _, a := range n.OnDuplicate {
		name := a.Column.Name.O
		if name == front.OnConflictWhere && a.Column.Table.O == "" {
			cond, err := b.Bind(a.Expr, sc)
			if err != nil {
				return nil, err
			}
			if up.where, err = binder.BooleanCondition(cond, "WHERE"); err != nil {
				return nil, err
			}
			continue
		}
		idx := columnIndex(cols, name)
		if idx < 0 || a.Column.Table.O != "" {
			return nil, sqlerr.New(sqlerr.UndefinedColumn, "column %q of relation %q does not exist", name, desc.Name).
				WithPosition(params.Statement().IdentPosition(name))
		}
		if err := s.bindAssignment(b, sc, desc, cols, up.sets, idx, a, params); err != nil {
			return nil, err
		}
	}
	up.subqueries = s.subqueryReads(append([]expr.Expr{up.where}, up.sets...))
	return up, nil
}

// bind returns up with the statement's parameter values and time in its
// expressions.
func (up *upsert) bind(vals []types.Datum, stmtTime time.Time) (*upsert, error) {
	out := &upsert{arb: up.arb, sets: make([]expr.Expr, len(up.sets)), subqueries: up.subqueries}
	var err error
	if out.where, err = bindOptional(up.where, vals); err != nil {
		return nil, err
	}
	out.where = expr.BindStatementTime(out.where, stmtTime)
	for i, e := range up.sets {
		if out.sets[i], err = bindOptional(e, vals); err != nil {
			return nil, err
		}
		out.sets[i] = expr.BindStatementTime(out.sets[i], stmtTime)
	}
	return out, nil
}

// writeUpsert stores rows (already of the table's column types) with up's
// ON CONFLICT DO UPDATE, answers RETURNING for the rows inserted and
// updated, and returns the command tag, which counts both.
func (s *session) writeUpsert(ctx context.Context, desc *catalog.Descriptor, rows []types.Row, up *upsert, vals []types.Datum, stmtTime time.Time,
	ret *returning, w pgwire.RowWriter) (string, error) {
	bound, err := up.bind(vals, stmtTime)
	if err != nil {
		return "", err
	}
	if up.subqueries != nil {
		if err := up.subqueries.ready(ctx); err != nil {
			return "", err
		}
	}
	written, err := s.insertIntoTableUpserting(ctx, desc, rows, bound, vals, stmtTime)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("INSERT 0 %d", len(written)), ret.write(w, written)
}

// needUpsert fails an INSERT ... ON CONFLICT DO UPDATE when the user may
// not UPDATE the target, or not SELECT from it: PostgreSQL wants SELECT
// on the arbiter's columns, which DO UPDATE always names. The SET list's
// subqueries need SELECT on what they read.
func (s *session) needUpsert(st *front.Statement, n *ast.InsertStmt, target *ast.TableName) error {
	if st.OnConflict == nil || !st.OnConflict.Update {
		return nil
	}
	if err := s.needOn(target, "UPDATE"); err != nil {
		return err
	}
	if err := s.needOn(target, "SELECT"); err != nil {
		return err
	}
	for _, a := range n.OnDuplicate {
		if err := s.needRead(st, a.Expr); err != nil {
			return err
		}
	}
	return nil
}
