package sql

import (
	"context"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"streamdb/binder"
	"streamdb/front"
	"streamdb/plan"
	"streamdb/sqlerr"
	"streamdb/types"
)

// The handlers of queries: SELECT and its set operations (UNION,
// INTERSECT, EXCEPT), at the present or AS OF a past point, EXPLAIN, and
// the empty statement.

// runEmpty runs the empty statement (a query string of only ';' or
// comments).
func (s *session) runEmpty(context.Context, *front.Empty) (string, error) { return "", nil }

// prepareSelect prepares a SELECT: the session functions that name users
// become its user, and a call of pg_cancel_backend or
// pg_terminate_backend alone is a signal (pgcatalog_signal.go); any other
// is a query.
func (s *session) prepareSelect(_ context.Context, n *ast.SelectStmt, st *front.Statement, params *binder.Params) (*prepared, error) {
	substituteUserFunctions(n, s.user)
	if p, ok, err := s.prepareBackendSignal(st); ok {
		return p, err
	}
	return s.prepareResultSet(st, params)
}

// prepareSetOpr prepares UNION, INTERSECT or EXCEPT.
func (s *session) prepareSetOpr(_ context.Context, _ *ast.SetOprStmt, st *front.Statement, params *binder.Params) (*prepared, error) {
	return s.prepareResultSet(st, params)
}

// prepareResultSet prepares a query: over the present catalog, or AS OF
// a past point (over the catalog of then, or over a view's history).
func (s *session) prepareResultSet(st *front.Statement, params *binder.Params) (*prepared, error) {
	if p, ok, err := s.prepareHistoryAsOf(st, params); ok {
		return p, err
	}
	if st.AsOf != nil {
		aos, err := s.e.asOfReader(st.AsOf)
		if err != nil {
			return nil, err
		}
		root, err := bindQueryIn(aos, st, params)
		id := aos.meta.ID
		aos.release()
		if err != nil {
			return nil, err
		}
		return s.prepareAsOf(st, id, root, params), nil
	}
	root, err := s.bindQuery(st, params)
	if err != nil {
		return nil, err
	}
	return s.prepareQuery(root, params), nil
}

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
			err = binder.CheckStreamable(root)
		}
	case *ast.SelectStmt, *ast.SetOprStmt:
		root, err = s.bindQuery(n.Stmt, s.params(n.Stmt))
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
