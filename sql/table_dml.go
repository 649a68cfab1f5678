package sql

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"streamdb/binder"
	"streamdb/catalog"
	"streamdb/exec"
	"streamdb/expr"
	"streamdb/sqlerr"
	"streamdb/types"
)

// UPDATE and DELETE on tables, and the table side of INSERT. See table.go
// for how a statement sees a table's current contents and publishes its
// changes.

// tableTarget resolves the single table an UPDATE or DELETE names.
func (s *session) tableTarget(refs *ast.TableRefsClause, what string, params *binder.Params) (*catalog.Descriptor, string, error) {
	if refs == nil || refs.TableRefs == nil || refs.TableRefs.Right != nil {
		return nil, "", sqlerr.New(sqlerr.FeatureNotSupported, "%s of more than one table is not supported", what)
	}
	ts, ok := refs.TableRefs.Left.(*ast.TableSource)
	if !ok {
		return nil, "", sqlerr.New(sqlerr.FeatureNotSupported, "%s needs a plain table name", what)
	}
	tn, ok := ts.Source.(*ast.TableName)
	if !ok {
		return nil, "", sqlerr.New(sqlerr.FeatureNotSupported, "%s needs a plain table name", what)
	}
	name := tn.Name.O
	if sch := tn.Schema.O; sch != "" && sch != "public" {
		return nil, "", sqlerr.New(sqlerr.UndefinedTable, "relation \"%s.%s\" does not exist", sch, name)
	}
	desc, ok := s.e.lookup(name)
	if !ok {
		return nil, "", sqlerr.New(sqlerr.UndefinedTable, "relation %q does not exist", name).
			WithPosition(params.Statement().IdentPosition(name))
	}
	if desc.Kind != catalog.KindTable {
		hint := "UPDATE and DELETE work on tables (CREATE TABLE without APPEND ONLY)."
		if desc.Kind == catalog.KindView {
			hint = "A materialized view is computed from its query; change its inputs instead."
		} else if desc.Kind == catalog.KindPlainView {
			hint = "A view is its query; change the tables it reads instead."
		} else if desc.Kind == catalog.KindStream {
			hint = "A stream is append-only; use a table (CREATE TABLE without APPEND ONLY) for rows that change."
		}
		return nil, "", sqlerr.New(sqlerr.WrongObjectType, "cannot %s %s %q", strings.ToLower(what), desc.Kind, name).WithHint("%s", hint)
	}
	alias := ts.AsName.O
	if alias == "" {
		alias = name
	}
	return desc, alias, nil
}

// bindTableWhere binds the WHERE of an UPDATE or DELETE over the table.
func (s *session) bindTableWhere(where ast.ExprNode, b *binder.ExprBinder, sc *binder.Scope) (expr.Expr, error) {
	if where == nil {
		return nil, nil
	}
	cond, err := b.Bind(where, sc)
	if err != nil {
		return nil, err
	}
	return binder.BooleanCondition(cond, "WHERE")
}

func refuseOrderLimit(what string, order *ast.OrderByClause, limit *ast.Limit) error {
	if order != nil || limit != nil {
		return sqlerr.New(sqlerr.SyntaxError, "%s does not take ORDER BY or LIMIT", what).
			WithHint("Select the rows with WHERE.")
	}
	return nil
}

func (s *session) prepareUpdate(n *ast.UpdateStmt, params *binder.Params) (*prepared, error) {
	if params.Statement().DMLJoin {
		return s.prepareUpdateFrom(n, params) // update_from.go
	}
	if n.MultipleTable {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "UPDATE of more than one table is not supported")
	}
	if err := refuseOrderLimit("UPDATE", n.Order, n.Limit); err != nil {
		return nil, err
	}
	desc, alias, err := s.tableTarget(n.TableRefs, "UPDATE", params)
	if err != nil {
		return nil, err
	}
	cols, sc, err := tableScope(desc, alias)
	if err != nil {
		return nil, err
	}
	b := binder.NewExprBinder(params)
	restore := s.allowSubqueries(params) // update_subquery.go
	defer restore()
	cond, err := s.bindTableWhere(n.Where, b, sc)
	if err != nil {
		return nil, err
	}
	sets, err := s.bindAssignments(n.List, sc, desc, cols, params)
	if err != nil {
		return nil, err
	}
	restore()
	ret, err := s.bindReturning(params.Statement().Returning, binder.TableScope(alias, cols), params)
	if err != nil {
		return nil, err
	}
	c := s.newRowChange(&rowChange{desc: desc, cols: cols, verb: "UPDATE", cond: cond, sets: sets, ret: ret})
	return c.prepared(s, params), nil
}

func (s *session) prepareDelete(n *ast.DeleteStmt, params *binder.Params) (*prepared, error) {
	if params.Statement().DMLJoin {
		return s.prepareDeleteUsing(n, params) // delete_using.go
	}
	if n.IsMultiTable {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "DELETE of more than one table is not supported")
	}
	if err := refuseOrderLimit("DELETE", n.Order, n.Limit); err != nil {
		return nil, err
	}
	desc, alias, err := s.tableTarget(n.TableRefs, "DELETE", params)
	if err != nil {
		return nil, err
	}
	cols, sc, err := tableScope(desc, alias)
	if err != nil {
		return nil, err
	}
	restore := s.allowSubqueries(params) // update_subquery.go
	defer restore()
	cond, err := s.bindTableWhere(n.Where, binder.NewExprBinder(params), sc)
	if err != nil {
		return nil, err
	}
	restore()
	ret, err := s.bindReturning(params.Statement().Returning, binder.TableScope(alias, cols), params)
	if err != nil {
		return nil, err
	}
	c := s.newRowChange(&rowChange{desc: desc, cols: cols, verb: "DELETE", cond: cond, ret: ret})
	return c.prepared(s, params), nil
}

// insertedRows returns the rows changes insert, in order.
func insertedRows(changes []exec.Change) []types.Row {
	var out []types.Row
	for _, ch := range changes {
		if ch.Sign > 0 {
			out = append(out, ch.Row)
		}
	}
	return out
}

// rowsOf returns the rows of changes, in order.
func rowsOf(changes []exec.Change) []types.Row {
	out := make([]types.Row, len(changes))
	for i, ch := range changes {
		out[i] = ch.Row
	}
	return out
}

// readsNothing is changeTable's where for a statement that reads no rows
// (INSERT).
var readsNothing expr.Expr = &expr.Const{D: types.NewBool(false), T: types.Bool}

// changeTable runs one statement against a table: compute turns the rows
// the statement's WHERE may select (ts.rowsWhere; where nil: every row,
// readsNothing: none) into the statement's changes. Outside a transaction
// they are computed, checked and published under the table's lock; inside
// one, computed against the table plus the transaction's earlier changes,
// checked, and kept for COMMIT.
func (s *session) changeTable(ctx context.Context, d *catalog.Descriptor, where expr.Expr, compute func([]types.Row) ([]exec.Change, error)) error {
	return s.changeTableFiltered(ctx, d, where, compute, nil)
}

// changeTableFiltered is changeTable with filter (when not nil) choosing,
// from the changes computed (generated columns filled in), the ones the
// statement makes, before they are checked.
func (s *session) changeTableFiltered(ctx context.Context, d *catalog.Descriptor, where expr.Expr, compute func([]types.Row) ([]exec.Change, error),
	filter func(context.Context, *tableState, []exec.Change) ([]exec.Change, error)) error {
	d = s.e.withCurrentIndexesOf(d)
	run := func(ctx context.Context, ts *tableState) ([]exec.Change, error) {
		gen, err := binder.BindGenerated(d, ts.cols)
		if err != nil {
			return nil, err
		}
		var rows []types.Row
		if where != readsNothing {
			var err error
			if rows, err = ts.RowsWhere(ctx, where); err != nil {
				return nil, err
			}
		}
		changes, err := compute(rows)
		if err != nil {
			return nil, err
		}
		if err := computeGenerated(gen, changes); err != nil {
			return nil, err
		}
		if filter != nil {
			if changes, err = filter(ctx, ts, changes); err != nil {
				return nil, err
			}
		}
		if err := checkTableChanges(d, ts.cols, changes, ts.KeyTaken); err != nil {
			return nil, err
		}
		if err := checkUniqueIndexes(d, ts, exec.ChangelogOrder([][]exec.Change{changes})); err != nil {
			return nil, err
		}
		base, err := s.txUniqueBase(ts, changes)
		if err != nil {
			return nil, err
		}
		return changes, s.e.checkConstraints(ctx, ts, base, changes, s.deferredCheck())
	}
	if s.tx == nil {
		return s.commitWrites(ctx, []*tableWrite{{d: d, compute: run, insertsOnly: where == readsNothing && filter == nil}}, nil)
	}
	snap, err := s.txSnapshot()
	if err != nil {
		return err
	}
	e := s.e
	e.stateMu.RLock()
	defer e.stateMu.RUnlock()
	if cur, ok := e.lookup(d.Name); !ok || cur.ID != d.ID {
		return sqlerr.New(sqlerr.UndefinedTable, "relation %q does not exist", d.Name)
	}
	ts, err := s.txTableState(snap, d)
	if err != nil {
		return err
	}
	w := s.tx.table(d)
	changes, err := run(ctx, ts)
	if err != nil {
		return err
	}
	derived, err := s.txForeignKeys(ctx, snap, d, changes)
	if err != nil {
		return err
	}
	w.stmts = append(w.stmts, changes)
	for _, dw := range derived {
		t := s.tx.table(dw.d)
		t.stmts = append(t.stmts, dw.stmts...)
	}
	if filter != nil {
		// ON CONFLICT DO NOTHING: its statement is recorded next
		// (txn.doNothing), then noted (insertIntoTableSkipping).
		return nil
	}
	return s.noteTxWrite(w, changes)
}

// insertIntoTable inserts an INSERT's rows into a table. Rows of a table
// with a primary key are checked against its current contents.
func (s *session) insertIntoTable(ctx context.Context, d *catalog.Descriptor, rows []types.Row) error {
	return s.changeTable(ctx, d, readsNothing, func([]types.Row) ([]exec.Change, error) {
		changes := make([]exec.Change, len(rows))
		for i, r := range rows {
			changes[i] = exec.Change{Row: r, Sign: exec.Insert}
		}
		return changes, nil
	})
}

// checkTableChanges enforces NOT NULL and primary key uniqueness on the
// rows a statement inserts; exists reports whether the table holds a key
// (encoded as its state key) before the statement.
func checkTableChanges(d *catalog.Descriptor, cols []types.Column, changes []exec.Change, exists func(key []byte) (bool, error)) error {
	for _, ch := range changes {
		if ch.Sign < 0 {
			continue
		}
		if err := checkNotNull(d, cols, ch.Row); err != nil {
			return err
		}
	}
	if len(d.PrimaryKey) == 0 {
		return nil
	}
	key := pkIndexes(d, cols)
	// A key is taken if the statement inserted it already, or if the
	// table holds it and the statement does not delete it.
	deleted := map[string]bool{}
	for _, ch := range changes {
		if ch.Sign < 0 {
			deleted[string(rowKey(key, ch.Row))] = true
		}
	}
	inserted := map[string]bool{}
	for _, ch := range changes {
		if ch.Sign < 0 {
			continue
		}
		k := string(rowKey(key, ch.Row))
		taken := inserted[k]
		if !taken && !deleted[k] {
			var err error
			if taken, err = exists([]byte(k)); err != nil {
				return err
			}
		}
		if taken {
			return duplicateKey(d, cols, key, ch.Row)
		}
		inserted[k] = true
	}
	return nil
}

// checkNotNull enforces NOT NULL on a row of table d.
func checkNotNull(d *catalog.Descriptor, cols []types.Column, row types.Row) error {
	for i, c := range d.Columns {
		if c.NotNull && row[i].IsNull() {
			return &sqlerr.Error{Code: sqlerr.NotNullViolation, Message: fmt.Sprintf("null value in column %q of relation %q violates not-null constraint", c.Name, d.Name),
				Detail: "Failing row contains " + formatRow(cols, row) + "."}
		}
	}
	return nil
}

func pkIndexes(d *catalog.Descriptor, cols []types.Column) []int {
	key := make([]int, len(d.PrimaryKey))
	for i, name := range d.PrimaryKey {
		key[i] = columnIndex(cols, name)
	}
	return key
}

func formatRow(cols []types.Column, r types.Row) string {
	parts := make([]string, len(r))
	for i, v := range r {
		if v.IsNull() {
			parts[i] = "null"
		} else {
			parts[i] = types.FormatText(v, cols[i].Type)
		}
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// bindAssignment binds SET column = expr (a) of an UPDATE or of an
// INSERT ... ON CONFLICT DO UPDATE into sets[idx]: DEFAULT is the
// column's default; identity and generated columns refuse it as
// PostgreSQL does; a column assigned twice is an error.
func (s *session) bindAssignment(b *binder.ExprBinder, sc *binder.Scope, desc *catalog.Descriptor, cols []types.Column, sets []expr.Expr, idx int, a *ast.Assignment, params *binder.Params) error {
	if sets[idx] != nil {
		return sqlerr.New(sqlerr.SyntaxError, "multiple assignments to same column %q", a.Column.Name.O)
	}
	var err error
	if _, isDefault := a.Expr.(*ast.DefaultExpr); isDefault {
		sets[idx], err = s.columnDefault(desc, cols, idx)
		return err
	}
	if err := updateIdentity(desc, idx); err != nil {
		return err
	}
	if err := refuseGeneratedUpdate(desc, idx); err != nil {
		return err
	}
	e, err := bindAssignedValue(b, sc, a.Expr) // update_from.go
	if err != nil {
		return err
	}
	sets[idx], err = binder.AssignTo(e, cols[idx], a.Expr, params)
	return err
}

// bindAssignments binds an UPDATE's SET list over sc (the target's
// columns cols, then its FROM list's): one expression per column of the
// target, nil for a column it leaves unchanged.
func (s *session) bindAssignments(list []*ast.Assignment, sc *binder.Scope, desc *catalog.Descriptor, cols []types.Column, params *binder.Params) ([]expr.Expr, error) {
	b := binder.NewExprBinder(params)
	sets := make([]expr.Expr, len(cols))
	for _, a := range list {
		idx := columnIndex(cols, a.Column.Name.O)
		if idx < 0 {
			return nil, sqlerr.New(sqlerr.UndefinedColumn, "column %q of relation %q does not exist", a.Column.Name.O, desc.Name).
				WithPosition(params.Statement().IdentPosition(a.Column.Name.O))
		}
		if err := s.bindAssignment(b, sc, desc, cols, sets, idx, a, params); err != nil {
			return nil, err
		}
	}
	return sets, nil
}

func tableScope(d *catalog.Descriptor, alias string) ([]types.Column, *binder.Scope, error) {
	cols, err := d.Schema()
	if err != nil {
		return nil, nil, err
	}
	return cols, binder.TableScope(alias, cols), nil
}

func columnIndex(cols []types.Column, name string) int {
	for i, c := range cols {
		if c.Name == name {
			return i
		}
	}
	return -1
}

func bindOptional(e expr.Expr, vals []types.Datum) (expr.Expr, error) {
	if e == nil {
		return nil, nil
	}
	return expr.BindParams(e, vals)
}

// bindSets binds an UPDATE's assignments (nil: the column is unchanged)
// to the statement's parameter values and its statement time.
func bindSets(sets []expr.Expr, vals []types.Datum, stmtTime time.Time) ([]expr.Expr, error) {
	bound := make([]expr.Expr, len(sets))
	for i, e := range sets {
		b, err := bindOptional(e, vals)
		if err != nil {
			return nil, err
		}
		bound[i] = expr.BindStatementTime(b, stmtTime)
	}
	return bound, nil
}
