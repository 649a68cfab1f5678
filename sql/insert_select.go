package sql

import (
	"context"
	"fmt"
	"time"

	"github.com/pingcap/tidb/pkg/parser/ast"

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
// as one batch. The query is read completely before anything is written, so
// INSERT INTO t SELECT ... FROM t sees t as it was before the statement.
func (s *session) prepareInsertSelect(q ast.ResultSetNode, desc *catalog.Descriptor, cols []types.Column, target []int, defaults []expr.Expr, ret *returning, params *boundParams) (*prepared, error) {
	arb, err := conflictArbiters(desc, params.stmt.OnConflict)
	if err != nil {
		return nil, err
	}
	st := *params.stmt
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
		if !assignable(c.Type, col.Type) {
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
		useDefault, err := identityOverride(desc, target[j], params.stmt.Overriding)
		if err != nil {
			return nil, err
		}
		if !useDefault {
			casts[j] = cast
		}
	}
	query := s.prepareQuery(root, params)
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
		// Each row the query writes is converted at once, so that the
		// query's own row is not kept.
		values := convertingCollector{convert: convert}
		if _, err := query.run(ctx, vals, &values); err != nil {
			return "", err
		}
		if arb == nil && len(ret.columns()) == 0 && desc.Kind == catalog.KindTable && s.canBulkInsert(desc) {
			return s.bulkInsertRows(ctx, desc, values.rows)
		}
		return s.writeInsert(ctx, desc, cols, values.rows, ret, w, arb)
	}}, nil
}

// bulkInsertRows inserts rows into table d as one streaming commit
// (bulkInsert, as an autocommit COPY does): they are checked and
// published a batch at a time, each let go once published, rather than
// held twice more (changes, changelog messages) until the commit.
func (s *session) bulkInsertRows(ctx context.Context, d *catalog.Descriptor, rows []types.Row) (string, error) {
	n, err := s.bulkInsert(ctx, d, func([]types.Row) error { return nil }, func(emit func([]types.Row) error) error {
		batch := make([]types.Row, 0, bulkBatchRows)
		for i, row := range rows {
			rows[i] = nil
			if batch = append(batch, row); len(batch) == bulkBatchRows {
				if err := emit(batch); err != nil {
					return err
				}
				batch = batch[:0]
			}
		}
		if len(batch) > 0 {
			return emit(batch)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("INSERT 0 %d", n), nil
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
