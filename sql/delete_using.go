package sql

import (
	"context"
	"fmt"
	"time"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"streamdb/binder"
	"streamdb/exec"
	"streamdb/expr"
	"streamdb/pgwire"
	"streamdb/sqlerr"
	"streamdb/types"
)

// prepareDeleteUsing prepares DELETE FROM t USING list WHERE ...: WHERE
// and RETURNING read the target's columns and the list's; each target
// row that joins a row of the list is deleted once (RETURNING reads the
// first such row; update_from_join.go).
func (s *session) prepareDeleteUsing(n *ast.DeleteStmt, params *binder.Params) (*prepared, error) {
	if err := refuseOrderLimit("DELETE", n.Order, n.Limit); err != nil {
		return nil, err
	}
	targetRefs, from, ok := splitDMLJoin(n.TableRefs)
	if !ok {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "this form of DELETE ... USING is not supported").
			WithHint("Write DELETE FROM t USING other WHERE ...")
	}
	desc, alias, err := s.tableTarget(targetRefs, "DELETE", params)
	if err != nil {
		return nil, err
	}
	cols, sc, err := tableScope(desc, alias)
	if err != nil {
		return nil, err
	}
	restore := s.allowSubqueries(params) // update_subquery.go
	defer restore()
	j, err := binder.BindDMLJoin(bindCatalog{s.e}, params, from, n.Where, sc)
	if err != nil {
		return nil, err
	}
	restore()
	cond := targetOnlyWhere(j.Where, len(cols))
	reads := s.joinReads(j, []expr.Expr{cond})
	ret, err := bindReturningIn(params.Statement().Returning, j.Scope, params)
	if err != nil {
		return nil, err
	}
	return &prepared{params: params, cols: ret.columns(), run: func(ctx context.Context, vals []types.Datum, w pgwire.RowWriter) (string, error) {
		cond, err := bindOptional(cond, vals)
		if err != nil {
			return "", err
		}
		sub, err := openDMLSubqueries(ctx, reads, vals, time.Now())
		if err != nil {
			return "", err
		}
		defer sub.close()
		join := &dmlJoinRun{j: j, sub: sub}
		var matched []types.Row // the list's rows, for RETURNING
		// remove appends row's deletion (when it joins a row of the list)
		// to out.
		remove := func(row types.Row, out []exec.Change) ([]exec.Change, bool, error) {
			cond, _, err := sub.resolve(ctx, cond, nil)
			if err != nil {
				return out, false, err
			}
			if ok, err := expr.Holds(cond, row); err != nil || !ok {
				return out, false, err
			}
			other, ok, err := join.first(row)
			if err != nil || !ok {
				return out, false, err
			}
			if ret != nil {
				matched = append(matched, other)
			}
			return append(out, exec.Change{Row: row, Sign: exec.Delete}), true, nil
		}
		if ret == nil && s.streamsChange(desc, cond, nil) {
			n, err := s.streamChange(ctx, desc, "the DELETE", remove, func([]exec.Change) error { return nil })
			if err != nil {
				return "", err
			}
			return fmt.Sprintf("DELETE %d", n), nil
		}
		n := 0
		var removed []types.Row
		err = s.changeTable(ctx, desc, cond, func(rows []types.Row) ([]exec.Change, error) {
			var changes []exec.Change
			n, removed, matched = 0, removed[:0], matched[:0]
			for _, row := range rows {
				var ok bool
				var err error
				if changes, ok, err = remove(row, changes); err != nil {
					return nil, err
				}
				if ok {
					if ret != nil {
						removed = append(removed, joined(row, matched[len(matched)-1]))
					}
					n++
				}
			}
			return changes, nil
		})
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("DELETE %d", n), ret.write(w, removed)
	}}, nil
}
