package sql

import (
	"context"
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
		var got rowCollector
		if _, err := query.run(ctx, vals, &got); err != nil {
			return "", err
		}
		values := make([]types.Row, len(got))
		stmtTime := time.Now()
		for i, in := range got {
			row := make(types.Row, len(cols))
			given := make([]bool, len(cols))
			for j, c := range casts {
				given[target[j]] = c != nil
			}
			for j := range row {
				row[j] = types.Null
				if defaults[j] != nil && !given[j] {
					if row[j], err = expr.BindStatementTime(defaults[j], stmtTime).Eval(nil); err != nil {
						return "", err
					}
				}
			}
			for j, c := range casts {
				if c == nil {
					continue // OVERRIDING USER VALUE: the default stands
				}
				v, err := c.Eval(in)
				if err != nil {
					return "", err
				}
				if v, err = expr.CastDatum(v, cols[target[j]].Type); err != nil {
					return "", err
				}
				row[target[j]] = v
			}
			values[i] = row
		}
		return s.writeInsert(ctx, desc, cols, values, ret, w, arb)
	}}, nil
}

// rowCollector keeps the rows a query writes.
type rowCollector []types.Row

func (c *rowCollector) WriteRow(r types.Row) error {
	*c = append(*c, append(types.Row(nil), r...))
	return nil
}
