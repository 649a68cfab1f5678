package sql

import (
	"github.com/pingcap/tidb/pkg/parser/ast"

	"streamdb/binder"
	"streamdb/sqlerr"
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
	ret, err := s.bindReturning(params.Statement().Returning, j.Scope, params)
	if err != nil {
		return nil, err
	}
	c := s.newRowChange(&rowChange{desc: desc, cols: cols, verb: "DELETE", cond: targetOnlyWhere(j.Where, len(cols)),
		ret: ret, join: newDMLJoin(j, len(cols))})
	return c.prepared(s, params), nil
}
