package sql

import (
	"github.com/pingcap/tidb/pkg/parser/ast"

	"streamdb/binder"
)

// prepareDeleteUsing prepares DELETE FROM t USING list WHERE ...: WHERE
// and RETURNING read the target's columns and the list's; each target
// row that joins a row of the list is deleted once (RETURNING reads the
// first such row; update_from_join.go).
func (s *session) prepareDeleteUsing(n *ast.DeleteStmt, params *binder.Params) (*prepared, error) {
	restore := s.allowSubqueries(params) // update_subquery.go
	defer restore()
	desc, cols, j, err := s.bindJoinTarget("DELETE", n.TableRefs, n.Order, n.Limit, n.Where, params)
	if err != nil {
		return nil, err
	}
	restore()
	ret, err := s.bindReturning(params.Statement().Returning, j.Scope, params)
	if err != nil {
		return nil, err
	}
	c := s.newRowChange(&rowChange{desc: desc, cols: cols, verb: "DELETE", cond: targetOnlyWhere(j.Where, len(cols)),
		ret: ret, join: newDMLJoin(j, len(cols))})
	return c.prepared(s, params), nil
}
