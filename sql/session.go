package sql

import (
	"context"
	"strconv"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"streamdb/pgwire"
	"streamdb/plan"
	"streamdb/sql/front"
	"streamdb/sqlerr"
	"streamdb/types"
)

// session is one client connection's state.
type session struct {
	e *Engine
	// settings holds SET values of this session (client_encoding,
	// application_name, ...), lower-case keys.
	settings map[string]string
	inTx     bool
	// txSavepoints are the transaction savepoints of the open block.
	txSavepoints []string
	// user and database are the startup parameters, for the catalog's
	// owner and database names.
	user, database string
}

func newSession(e *Engine, startup map[string]string) *session {
	s := &session{e: e, settings: map[string]string{}, user: startup["user"], database: startup["database"]}
	for k, v := range defaultSessionSettings {
		s.settings[k] = v
	}
	if v := startup["application_name"]; v != "" {
		s.settings["application_name"] = v
	}
	return s
}

func (s *session) Split(sql string) ([]string, error) { return front.Split(sql), nil }

func (s *session) TxStatus() byte {
	if s.inTx {
		return 'T'
	}
	return 'I'
}

func (s *session) Close() {}

func (s *session) Prepare(ctx context.Context, sql string, paramTypes []types.Type) (pgwire.Prepared, error) {
	st, err := front.Parse(sql)
	if err != nil {
		return nil, err
	}
	if n, ok := st.Node.(ast.Node); ok {
		numberParamMarkers(n)
	}
	params := &boundParams{order: st.Params, types: append([]types.Type(nil), paramTypes...), stmt: st}
	for len(params.types) < st.NumParams {
		params.types = append(params.types, types.Unknown)
	}
	p, err := s.prepare(ctx, st, params)
	if err != nil {
		return nil, err
	}
	s.applyFloatDigits(p)
	return p, nil
}

// applyFloatDigits makes float columns print with 15 + extra_float_digits
// significant digits when the session set it below 1, as PostgreSQL does
// (at 1 or more it prints the shortest exact form).
func (s *session) applyFloatDigits(p *prepared) {
	efd, err := strconv.Atoi(strings.TrimSpace(s.settings["extra_float_digits"]))
	if err != nil || efd >= 1 {
		return
	}
	efd = max(efd, -15)
	cols := append([]types.Column(nil), p.cols...)
	for i := range cols {
		if cols[i].Type == types.Float8 || cols[i].Type == types.Float4 {
			cols[i].Mod.FloatDigits = 15 + efd
		}
	}
	p.cols = cols
}

func (s *session) prepare(ctx context.Context, st *front.Statement, params *boundParams) (*prepared, error) {
	switch n := st.Node.(type) {
	case *front.Empty:
		return command(func(context.Context) (string, error) { return "", nil }), nil
	case *ast.SelectStmt, *ast.SetOprStmt:
		if st.AsOf != nil {
			aos, err := s.e.asOfReader(st.AsOf)
			if err != nil {
				return nil, err
			}
			root, err := s.e.bindQueryIn(aos, st, params)
			id := aos.meta.ID
			aos.release()
			if err != nil {
				return nil, err
			}
			return s.prepareAsOf(st, id, root, params), nil
		}
		root, err := s.e.bindQuery(st, params)
		if err != nil {
			return nil, err
		}
		return s.prepareQuery(root, params), nil
	case *ast.InsertStmt:
		return s.prepareInsert(n, params)
	case *ast.UpdateStmt:
		return s.prepareUpdate(n, params)
	case *ast.DeleteStmt:
		return s.prepareDelete(n, params)
	case *front.CreateSource:
		return command(func(ctx context.Context) (string, error) { return s.e.createSource(ctx, n) }), nil
	case *front.CreateMaterializedView:
		// Bind now so that errors surface at Parse time, and again at run
		// time against the catalog of that moment.
		if _, err := s.e.bindQuery(viewQuery(st, n), params); err != nil {
			return nil, err
		}
		if st.NumParams > 0 {
			return nil, sqlerr.New(sqlerr.FeatureNotSupported, "a materialized view cannot have parameters")
		}
		return command(func(ctx context.Context) (string, error) { return s.e.createView(ctx, n, st) }), nil
	case *front.CreateView:
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "CREATE VIEW is not supported").
			WithHint("Use CREATE MATERIALIZED VIEW: streamdb keeps views materialized and current.")
	case *front.Drop:
		return command(func(ctx context.Context) (string, error) { return s.e.drop(ctx, n) }), nil
	case *front.Show:
		return s.prepareShow(n)
	case *front.CatalogQuery:
		return s.prepareCatalogQuery(n)
	case *front.Set:
		return s.prepareSet(n)
	case *front.Flush:
		return command(func(ctx context.Context) (string, error) { return "FLUSH", s.e.flush(ctx) }), nil
	case *front.Transaction:
		return command(func(context.Context) (string, error) {
			switch n.Action {
			case front.TxnBegin:
				s.inTx = true
				return "BEGIN", nil
			case front.TxnCommit:
				s.inTx, s.txSavepoints = false, nil
				return "COMMIT", nil
			}
			s.inTx, s.txSavepoints = false, nil
			return "ROLLBACK", nil
		}), nil
	case *front.Explain:
		return s.prepareExplain(n)
	case *front.Checkpoint:
		return command(s.e.checkpointNow), nil
	case *front.Savepoint:
		if s.inTx {
			return s.txSavepoint(n.Name), nil
		}
		return command(func(ctx context.Context) (string, error) { return s.e.createSavepoint(ctx, n.Name) }), nil
	case *front.ReleaseSavepoint:
		if s.inTx {
			return s.txRelease(n.Name), nil
		}
		return command(func(context.Context) (string, error) { return s.e.releaseSavepoint(n.Name) }), nil
	case *front.RollbackTo:
		if s.inTx && n.Kind == front.PointSavepoint {
			return s.txRollbackTo(n.Name), nil
		}
		return command(func(ctx context.Context) (string, error) {
			m, err := s.e.resolvePoint(n.Kind, n.Name, n.ID, n.Time)
			if err != nil {
				return "", err
			}
			return s.e.rollback(ctx, m)
		}), nil
	case *front.AlterSystem:
		return command(func(context.Context) (string, error) {
			s.e.rt.SetPaused(n.Action == front.SystemPause)
			s.e.log.Info("sources", "paused", n.Action == front.SystemPause)
			return "ALTER SYSTEM", nil
		}), nil
	case *front.AlterStreamPosition:
		return command(func(ctx context.Context) (string, error) { return s.e.alterStreamPosition(ctx, n) }), nil
	}
	return nil, sqlerr.New(sqlerr.FeatureNotSupported, "statement %q is not supported", statementName(st.Text))
}

// viewQuery is the statement of a view's query: st with the query as node.
func viewQuery(st *front.Statement, n *front.CreateMaterializedView) *front.Statement {
	q := *st
	q.Node = n.Query
	return &q
}

// statementName is the leading keywords of a statement, for messages.
func statementName(text string) string {
	f := strings.Fields(text)
	if len(f) > 2 {
		f = f[:2]
	}
	return strings.ToUpper(strings.Join(f, " "))
}

// bindQuery binds a SELECT statement into a logical plan.
func (e *Engine) bindQuery(st *front.Statement, params *boundParams) (plan.Node, error) {
	return e.bindQueryIn(e, st, params)
}

// bindQueryIn binds a SELECT against a given catalog.
func (e *Engine) bindQueryIn(cat catalogReader, st *front.Statement, params *boundParams) (plan.Node, error) {
	sb := &selectBinder{cat: cat, params: params}
	if n, ok := st.Node.(ast.Node); ok {
		normalizeAggregates(n)
	}
	switch n := st.Node.(type) {
	case *ast.SelectStmt:
		return sb.bindSelect(n)
	case *ast.SetOprStmt:
		return sb.bindSetOpr(n)
	}
	return nil, sqlerr.New(sqlerr.SyntaxError, "expected a query")
}

// planView parses and binds a view's stored query.
func (e *Engine) planView(query string) (plan.Node, error) {
	st, err := front.Parse(query)
	if err != nil {
		return nil, err
	}
	return e.bindQuery(st, &boundParams{stmt: st})
}

func (s *session) prepareExplain(n *front.Explain) (*prepared, error) {
	var root plan.Node
	var err error
	switch inner := n.Stmt.Node.(type) {
	case *front.CreateMaterializedView:
		if _, exists := s.e.lookup(inner.Name); exists && !inner.IfNotExists {
			return nil, sqlerr.New(sqlerr.DuplicateTable, "relation %q already exists", inner.Name)
		}
		root, err = s.e.bindQuery(viewQuery(n.Stmt, inner), &boundParams{stmt: n.Stmt})
		if err == nil {
			err = checkStreamable(root)
		}
	case *ast.SelectStmt, *ast.SetOprStmt:
		root, err = s.e.bindQuery(n.Stmt, &boundParams{order: n.Stmt.Params, stmt: n.Stmt})
	default:
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "EXPLAIN supports SELECT and CREATE MATERIALIZED VIEW")
	}
	if err != nil {
		return nil, err
	}
	text := plan.Explain(root)
	if _, ok := n.Stmt.Node.(*front.CreateMaterializedView); ok {
		text = s.e.explainStreaming(root)
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
