package sql

import (
	"context"
	"fmt"
	"time"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"streamdb/binder"
	"streamdb/catalog"
	"streamdb/expr"
	"streamdb/pgwire"
	"streamdb/sqlerr"
	"streamdb/types"
)

// prepareInsert binds INSERT INTO stream [(cols)] VALUES (...), (...).
// Executing it publishes one JSON message per row to the stream's subject
// (at COMMIT inside a transaction block) and returns once JetStream has
// acknowledged every one; rows for a table go to its changelog as one
// message (changeTable).
func (s *session) prepareInsert(n *ast.InsertStmt, params *binder.Params) (*prepared, error) {
	oc := params.Statement().OnConflict
	if n.IsReplace || n.Setlist || len(n.OnDuplicate) > 0 && (oc == nil || !oc.Update) {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "this form of INSERT is not supported")
	}
	tn, ok := n.Table.TableRefs.Left.(*ast.TableSource)
	if !ok {
		return nil, sqlerr.New(sqlerr.SyntaxError, "INSERT needs a target table")
	}
	name := tn.Source.(*ast.TableName).Name.O
	desc, ok := s.e.lookup(name)
	if !ok {
		return nil, sqlerr.New(sqlerr.UndefinedTable, "relation %q does not exist", name).
			WithPosition(params.Statement().IdentPosition(name))
	}
	if desc.Kind != catalog.KindStream && desc.Kind != catalog.KindTable {
		hint := "INSERT works on streams and tables; a materialized view is computed from its query."
		if desc.Kind == catalog.KindPlainView {
			hint = "INSERT works on streams and tables; a view is its query: insert into the tables it reads."
		}
		return nil, sqlerr.New(sqlerr.WrongObjectType, "cannot insert into %s %q", desc.Kind, name).WithHint("%s", hint)
	}
	if err := checkStreamWrite(desc, "insert into"); err != nil {
		return nil, err
	}
	arb, err := conflictArbiters(desc, params.Statement().OnConflict)
	if err != nil {
		return nil, err
	}
	cols, err := desc.Schema()
	if err != nil {
		return nil, err
	}
	// target[i] is the stream column that the i-th value goes to.
	target := make([]int, len(cols))
	for i := range target {
		target[i] = i
	}
	if len(n.Columns) > 0 {
		target = target[:0]
		for _, c := range n.Columns {
			idx := -1
			for j, col := range cols {
				if col.Name == c.Name.O {
					idx = j
				}
			}
			if idx < 0 {
				return nil, sqlerr.New(sqlerr.UndefinedColumn, "column %q of relation %q does not exist", c.Name.O, name).
					WithPosition(params.Statement().IdentPosition(c.Name.O))
			}
			for _, t := range target {
				if t == idx {
					return nil, sqlerr.New(sqlerr.DuplicateColumn, "column %q specified more than once", c.Name.O).
						WithPosition(params.Statement().IdentPosition(c.Name.O))
				}
			}
			target = append(target, idx)
		}
	}
	if target, err = writeTargets(desc, cols, target, len(n.Columns) > 0); err != nil {
		return nil, err
	}
	alias := name
	if params.Statement().InsertAlias != "" {
		alias = params.Statement().InsertAlias
	}
	var up *upsert
	if oc != nil && oc.Update {
		if up, err = s.bindUpsert(n, desc, cols, alias, arb, params); err != nil {
			return nil, err
		}
	}
	ret, err := s.bindReturning(params.Statement().Returning, binder.TableScope(alias, cols), params)
	if err != nil {
		return nil, err
	}
	if oc != nil && ret.hasSubqueries() {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "subqueries in RETURNING of INSERT ... ON CONFLICT are not supported").
			WithHint("Run the subquery in a separate SELECT, or drop ON CONFLICT.")
	}
	defaults, err := s.columnDefaults(desc, cols)
	if err != nil {
		return nil, err
	}
	if n.Select != nil {
		return s.prepareInsertSelect(n.Select, desc, cols, target, defaults, ret, up, params)
	}
	b := binder.NewExprBinder(params)
	rows := make([][]expr.Expr, len(n.Lists))
	for i, list := range n.Lists {
		if len(list) > len(target) {
			return nil, sqlerr.New(sqlerr.SyntaxError, "INSERT has more expressions than target columns")
		}
		row := make([]expr.Expr, len(cols))
		for j := range row {
			row[j] = defaults[j]
			if row[j] == nil {
				row[j] = &expr.Const{D: types.Null, T: cols[j].Type}
			}
		}
		for j, node := range list {
			if _, isDefault := node.(*ast.DefaultExpr); isDefault {
				continue
			}
			if err := refuseGeneratedValue(desc, target[j]); err != nil {
				return nil, err
			}
			useDefault, err := identityOverride(desc, target[j], params.Statement().Overriding)
			if err != nil {
				return nil, err
			}
			if useDefault {
				continue
			}
			e, err := b.Bind(node, nil)
			if err != nil {
				return nil, err
			}
			cast, err := binder.AssignTo(e, cols[target[j]], node, params)
			if err != nil {
				return nil, err
			}
			row[target[j]] = cast
		}
		rows[i] = row
	}
	return &prepared{params: params, cols: ret.columns(), run: func(ctx context.Context, vals []types.Datum, w pgwire.RowWriter) (string, error) {
		values := make([]types.Row, 0, len(rows))
		// now() is the statement's time in every row, a default's too.
		stmtTime := time.Now()
		for _, exprs := range rows {
			row := make(types.Row, len(exprs))
			for j, e := range exprs {
				bound, err := expr.BindParams(e, vals)
				if err != nil {
					return "", err
				}
				bound = expr.BindStatementTime(bound, stmtTime)
				v, err := bound.Eval(nil)
				if err != nil {
					return "", err
				}
				if v, err = expr.CastDatum(v, cols[j].Type); err != nil {
					return "", err
				}
				row[j] = v
			}
			values = append(values, row)
		}
		ir, err := s.openInsertReturning(ctx, ret, vals, stmtTime)
		if err != nil {
			return "", err
		}
		defer ir.close()
		if up != nil {
			return s.writeUpsert(ctx, desc, values, up, vals, stmtTime, ir.returning(), w)
		}
		return s.writeInsert(ctx, desc, cols, values, ir, w, arb)
	}}, nil
}

// writeInsert stores rows, already of the relation's column types, in a
// table (through its changelog, with its constraints checked) or publishes
// them to a stream (at COMMIT inside a transaction block), answers the
// RETURNING rows of ret (if any) once the write succeeded, and returns the
// command tag. A stream's RETURNING rows are the values published.
// RETURNING's subqueries are evaluated before the rows are visible
// (insert_returning.go).
//
// arb, when not nil, are the unique keys whose conflicts ON CONFLICT DO
// NOTHING skips: the tag counts and RETURNING answers the rows inserted.
func (s *session) writeInsert(ctx context.Context, desc *catalog.Descriptor, cols []types.Column, values []types.Row, ret *insertReturning, w pgwire.RowWriter, arb map[string]bool) (string, error) {
	var out []types.Row
	var err error
	tag := fmt.Sprintf("INSERT 0 %d", len(values))
	switch {
	case arb != nil:
		// prepareInsert refuses subqueries in RETURNING here.
		kept, err := s.insertIntoTableSkipping(ctx, desc, values, arb)
		if err != nil {
			return "", err
		}
		tag = fmt.Sprintf("INSERT 0 %d", len(kept))
		out, err = ret.eval(kept)
		if err != nil {
			return "", err
		}
	case ret.readsState() && desc.Kind == catalog.KindTable:
		if out, err = s.insertIntoTableReturning(ctx, desc, values, ret); err != nil {
			return "", err
		}
	default:
		if ret.readsState() { // a stream's: before its rows are published
			if out, err = ret.evalLocked(s, values); err != nil {
				return "", err
			}
		}
		if tag, err = s.writeInsertRows(ctx, desc, cols, values); err != nil {
			return "", err
		}
		if !ret.readsState() {
			if out, err = ret.eval(values); err != nil {
				return "", err
			}
		}
	}
	return tag, writeRows(w, out)
}

func (s *session) writeInsertRows(ctx context.Context, desc *catalog.Descriptor, cols []types.Column, values []types.Row) (string, error) {
	tag := fmt.Sprintf("INSERT 0 %d", len(values))
	if desc.Kind == catalog.KindTable {
		return tag, s.insertIntoTable(ctx, desc, values)
	}
	msgs := make([][]byte, len(values))
	for i, row := range values {
		data, err := encodeStreamRow(desc, memberColumns(desc, cols), row)
		if err != nil {
			return "", err
		}
		msgs[i] = data
	}
	if s.tx != nil {
		w := s.tx.stream(desc)
		w.msgs = append(w.msgs, msgs...)
		return tag, s.noteTxRows(w, msgs)
	}
	return tag, s.commitWrites(ctx, nil, []*streamWrite{{d: desc, msgs: msgs}})
}
