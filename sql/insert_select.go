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

// prepareInsertSelect binds INSERT INTO rel [(cols)] SELECT ...: the query
// runs as an ad-hoc SELECT over committed state (or the transaction block's
// view of it), and its rows are written exactly as INSERT ... VALUES writes
// them: assignment casts to the column types, omitted columns their defaults, the
// table's constraints checked on the whole batch, a stream's rows published
// as one batch. Into a table outside a transaction block the rows flow
// into the commit as the query makes them (bulkInsertQuery), with or
// without RETURNING or ON CONFLICT DO NOTHING, and with ON CONFLICT DO
// UPDATE where that is exact (streamUpsert); otherwise (inside a block,
// into a table whose foreign key references itself, or a DO UPDATE that
// does not stream) the query is read completely before anything is
// written. Either way INSERT
// INTO t SELECT ... FROM t sees t as it was before the statement.
func (s *session) prepareInsertSelect(q ast.ResultSetNode, desc *catalog.Descriptor, cols []types.Column, target []int, defaults []expr.Expr, ret *returning, up *upsert, params *binder.Params) (*prepared, error) {
	arb, err := conflictArbiters(desc, params.Statement().OnConflict)
	if err != nil {
		return nil, err
	}
	st := *params.Statement()
	st.Node = q
	root, err := s.bindQuery(&st, params)
	if err != nil {
		return nil, err
	}
	out := root.Schema()
	if len(out) > len(target) {
		return nil, sqlerr.New(sqlerr.SyntaxError, "INSERT has more expressions than target columns")
	}
	// casts[j] turns the query's column j into the value of column target[j]
	// (nil: an identity column's default stands, OVERRIDING USER VALUE).
	casts := make([]expr.Expr, len(out))
	for j, c := range out {
		col := cols[target[j]]
		if !binder.Assignable(c.Type, col.Type) {
			return nil, sqlerr.New(sqlerr.DatatypeMismatch, "column %q is of type %s but expression is of type %s", col.Name, col.Type, c.Type).
				WithHint("You will need to rewrite or cast the expression.")
		}
		cast, err := expr.CastWithModifier(&expr.ColRef{Idx: j, Name: c.Name, T: c.Type}, col.Type, col.Mod, false)
		if err != nil {
			return nil, err
		}
		if err := refuseGeneratedValue(desc, target[j]); err != nil {
			return nil, err
		}
		useDefault, err := identityOverride(desc, target[j], params.Statement().Overriding)
		if err != nil {
			return nil, err
		}
		if !useDefault {
			casts[j] = cast
		}
	}
	query := s.adHocQuery(root)
	return &prepared{params: params, cols: ret.columns(), run: func(ctx context.Context, vals []types.Datum, w pgwire.RowWriter) (string, error) {
		stmtTime := time.Now()
		convert := func(in types.Row) (types.Row, error) {
			row := make(types.Row, len(cols))
			given := make([]bool, len(cols))
			for j, c := range casts {
				given[target[j]] = c != nil
			}
			for j := range row {
				row[j] = types.Null
				if defaults[j] != nil && !given[j] {
					var err error
					if row[j], err = expr.BindStatementTime(defaults[j], stmtTime).Eval(nil); err != nil {
						return nil, err
					}
				}
			}
			for j, c := range casts {
				if c == nil {
					continue // OVERRIDING USER VALUE: the default stands
				}
				v, err := c.Eval(in)
				if err != nil {
					return nil, err
				}
				if v, err = expr.CastDatum(v, cols[target[j]].Type); err != nil {
					return nil, err
				}
				row[target[j]] = v
			}
			return row, nil
		}
		if err := query.ready(ctx); err != nil {
			return "", err
		}
		ir, err := s.openInsertReturning(ctx, ret, vals, stmtTime)
		if err != nil {
			return "", err
		}
		defer ir.close()
		// written answers a checked batch's RETURNING rows, inside the
		// write (under stateMu shared) before the batch is visible.
		written := func(rows []types.Row) error {
			out, err := ir.eval(rows)
			if err != nil {
				return err
			}
			return writeRows(w, out)
		}
		if desc.Kind == catalog.KindTable && up == nil && s.streamsInsert(desc) {
			return s.bulkInsertQuery(ctx, desc, arb, query, vals, convert, written)
		}
		if up != nil && s.streamsUpsert(desc, up) {
			bound, err := up.bind(vals, stmtTime)
			if err != nil {
				return "", err
			}
			return s.streamUpsert(ctx, desc, bound, query, vals, convert, written)
		}
		// A block's batches become visible to the block as they are
		// spilled, before the next batch's RETURNING runs: with
		// subqueries there, the rows are read whole first.
		if arb == nil && !ir.readsState() && s.spillsInsert(desc, query.reads) {
			return s.blockInsertQuery(ctx, desc, query, vals, convert, written)
		}
		// Each row the query writes is converted at once, so that the
		// query's own row is not kept.
		values := convertingCollector{convert: convert}
		s.e.stateMu.RLock()
		_, err = query.runLocked(ctx, vals, &values)
		s.e.stateMu.RUnlock()
		if err != nil {
			return "", err
		}
		if up != nil {
			return s.writeUpsert(ctx, desc, values.rows, up, vals, stmtTime, ir.returning(), w)
		}
		return s.writeInsert(ctx, desc, cols, values.rows, ir, w, arb)
	}}, nil
}

// bulkInsertQuery inserts the rows of query into table d as one streaming
// commit (bulkInsert, as an autocommit COPY does; arb are the arbiters of
// ON CONFLICT DO NOTHING, nil without it): the query runs inside
// the commit, under the locks it holds, and its rows are converted,
// checked and published a batch at a time as it makes them, so neither
// its result nor the commit is ever held whole. The query reads a
// snapshot that the commit's own rows are not in (they are applied only
// after its decision), so INSERT INTO t SELECT ... FROM t sees t as it was
// before the statement. An error anywhere, in the query or in a check,
// leaves nothing of the commit. written (the statement's RETURNING) is
// handed each batch once it is checked and published, before the commit,
// as PostgreSQL answers RETURNING rows as it inserts them.
func (s *session) bulkInsertQuery(ctx context.Context, d *catalog.Descriptor, arb map[string]bool, query *adHoc, vals []types.Datum,
	convert func(types.Row) (types.Row, error), written func([]types.Row) error) (string, error) {
	n, err := s.bulkInsert(ctx, d, arb, func([]types.Row) error { return nil }, func(emit func([]types.Row) ([]types.Row, error)) error {
		publish := func(rows []types.Row) error {
			inserted, err := emit(rows)
			if err != nil {
				return err
			}
			return written(inserted)
		}
		batch := &batchingWriter{convert: convert, emit: publish, rows: make([]types.Row, 0, bulkBatchRows)}
		// bulkInsert holds stateMu shared, as runLocked needs.
		if _, err := query.runLocked(ctx, vals, batch); err != nil {
			return err
		}
		return batch.flush()
	})
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("INSERT 0 %d", n), nil
}

// batchingWriter converts the rows a query writes and hands them to emit
// bulkBatchRows at a time, reusing its batch once emit returns.
type batchingWriter struct {
	convert func(types.Row) (types.Row, error)
	emit    func([]types.Row) error
	rows    []types.Row
}

func (b *batchingWriter) WriteRow(r types.Row) error {
	row, err := b.convert(r)
	if err != nil {
		return err
	}
	if b.rows = append(b.rows, row); len(b.rows) == bulkBatchRows {
		return b.flush()
	}
	return nil
}

func (b *batchingWriter) flush() error {
	if len(b.rows) == 0 {
		return nil
	}
	err := b.emit(b.rows)
	clear(b.rows)
	b.rows = b.rows[:0]
	return err
}

// convertingCollector keeps what convert makes of each row a query
// writes.
type convertingCollector struct {
	convert func(types.Row) (types.Row, error)
	rows    []types.Row
}

func (c *convertingCollector) WriteRow(r types.Row) error {
	row, err := c.convert(r)
	if err != nil {
		return err
	}
	c.rows = append(c.rows, row)
	return nil
}

// rowCollector keeps the rows a query writes.
type rowCollector []types.Row

func (c *rowCollector) WriteRow(r types.Row) error {
	*c = append(*c, append(types.Row(nil), r...))
	return nil
}
