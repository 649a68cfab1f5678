package sql

import (
	"context"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"streamdb/plan"
	"streamdb/sql/front"
	"streamdb/sqlerr"
	"streamdb/types"
)

func (s *session) prepareExplain(n *front.Explain) (*prepared, error) {
	var root plan.Node
	var err error
	switch inner := n.Stmt.Node.(type) {
	case *front.CreateMaterializedView:
		if _, exists := s.e.lookup(inner.Name); inner.Alter || (inner.Replace && exists) {
			return s.explainAlter(n, inner)
		}
		if _, exists := s.e.lookup(inner.Name); exists && !inner.IfNotExists {
			return nil, sqlerr.New(sqlerr.DuplicateTable, "relation %q already exists", inner.Name)
		}
		root, err = s.e.bindView(n.Stmt, inner)
		if err == nil {
			err = checkStreamable(root)
		}
	case *ast.SelectStmt, *ast.SetOprStmt:
		root, err = s.bindQuery(n.Stmt, &boundParams{order: n.Stmt.Params, stmt: n.Stmt, sess: s})
	default:
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "EXPLAIN supports SELECT and CREATE MATERIALIZED VIEW")
	}
	if err != nil {
		return nil, err
	}
	var text string
	if _, ok := n.Stmt.Node.(*front.CreateMaterializedView); ok {
		text = s.e.explainStreaming(root)
	} else {
		text = s.e.explainQuery(root)
	}
	cols := []types.Column{{Name: "QUERY PLAN", Type: types.Text}}
	return rowsResult(cols, func(context.Context) ([]types.Row, error) {
		var rows []types.Row
		for _, line := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
			rows = append(rows, types.Row{types.NewString(line)})
		}
		return rows, nil
	}), nil
}
