package sql

import (
	"context"
	"time"

	"streamdb/binder"
	"streamdb/catalog"
	"streamdb/exec"
	"streamdb/expr"
	"streamdb/front"
	"streamdb/meta"
	"streamdb/pgwire"
	"streamdb/plan"
	"streamdb/sqlerr"
	"streamdb/types"
)

// prepareQuery binds a SELECT for ad-hoc execution over committed state.
func (s *session) prepareQuery(root plan.Node, params *binder.Params) *prepared {
	q := s.adHocQuery(root)
	cols, origins := queryColumns(root)
	return &prepared{params: params, cols: cols, origins: origins, run: func(ctx context.Context, vals []types.Datum, w pgwire.RowWriter) (string, error) {
		if err := q.ready(ctx); err != nil {
			return "", err
		}
		s.e.stateMu.RLock()
		defer s.e.stateMu.RUnlock()
		return q.runLocked(ctx, vals, w)
	}}
}

// adHoc is a bound SELECT run over committed state: ready checks and
// waits for what it reads, then runLocked runs it, under stateMu (held
// shared by the caller), sending its rows to a writer as they are made.
// A caller that holds stateMu for a write of its own (INSERT ... SELECT
// streaming into a table) calls ready first, then runLocked inside its
// write.
type adHoc struct {
	s    *session
	root plan.Node
	// reads stands for everything the query reads, its subqueries'
	// inputs included, for the checks and waits that look at sources.
	reads plan.Node
}

func (s *session) adHocQuery(root plan.Node) *adHoc {
	reads := root
	if all := withSubqueries(root); len(all) > 1 {
		reads = &plan.Union{Inputs: all}
	}
	s.e.markStoredKeys(reads)
	return &adHoc{s: s, root: root, reads: reads}
}

// ready fails if what q reads cannot be read now, and waits until it
// holds every acknowledged write.
func (q *adHoc) ready(ctx context.Context) error {
	s := q.s
	if err := s.e.checkPopulated(q.reads); err != nil {
		return err
	}
	if err := s.e.checkViewsRunning(q.reads); err != nil {
		return err
	}
	return s.waitAcknowledged(ctx, q.reads)
}

// runLocked runs q with parameter values vals and writes its rows to w.
// The caller holds stateMu shared.
func (q *adHoc) runLocked(ctx context.Context, vals []types.Datum, w pgwire.RowWriter) (string, error) {
	x, err := q.open(ctx, vals, time.Now())
	if err != nil {
		return "", err
	}
	defer x.close()
	bound, err := x.bind(q.root)
	if err != nil {
		return "", err
	}
	return runAndWrite(x.ctx, bound, x.r, w)
}

// adHocExec is one execution of an ad-hoc query: the state it reads (a
// snapshot of committed state, or the transaction block's view of it)
// and what readies a plan (the query's, or one of its subqueries') for
// it. It is used under stateMu shared and closed once its plans ran.
type adHocExec struct {
	ctx context.Context // bounded by query_max_memory
	r   meta.StateReader
	// bind gives a plan its parameter values, the statement's time
	// (now()) and the block's view of tables, and runs its subqueries.
	bind func(plan.Node) (plan.Node, error)
	// runSub binds a plan and returns its rows.
	runSub func(plan.Node) ([]types.Row, error)
	close  func()
}

// open starts an execution of q with parameter values vals at statement
// time stmtTime. The caller holds stateMu shared until it closes it.
func (q *adHoc) open(ctx context.Context, vals []types.Datum, stmtTime time.Time) (*adHocExec, error) {
	s := q.s
	limit, _ := parseMemory(s.settings["query_max_memory"])
	ctx, release := exec.WithMemoryLimit(ctx, limit, s.e.host.QueryPool())
	x := &adHocExec{ctx: ctx, close: release}
	var scan func(*plan.Scan) (plan.Node, error)
	if s.tx != nil {
		r, sc, done, err := s.txRead(ctx, q.reads)
		if err != nil {
			release()
			return nil, err
		}
		x.r, scan = r, sc
		x.close = func() { done(); release() }
	} else {
		snap := s.e.state.Snapshot()
		x.r = snap
		x.close = func() { snap.Close(); release() }
	}
	x.runSub = func(n plan.Node) ([]types.Row, error) {
		bound, err := x.bind(n)
		if err != nil {
			return nil, err
		}
		return exec.RunBatch(ctx, bound, x.r)
	}
	streamSub := func(n plan.Node, emit func(types.Row) error) error {
		bound, err := x.bind(n)
		if err != nil {
			return err
		}
		return exec.StreamBatch(ctx, bound, x.r, emit)
	}
	x.bind = func(n plan.Node) (plan.Node, error) {
		bound, err := bindPlan(n, vals, scan)
		if err != nil {
			return nil, err
		}
		if bound, err = s.readStreams(ctx, bound); err != nil {
			return nil, err
		}
		if bound, err = binder.MapPlan(bound, func(e expr.Expr) (expr.Expr, error) {
			return expr.BindStatementTime(e, stmtTime), nil
		}, nil); err != nil {
			return nil, err
		}
		if err := s.e.checkSources(bound); err != nil {
			return nil, err
		}
		if bound, err = s.e.withCurrentIndexes(bound); err != nil {
			return nil, err
		}
		if bound, err = resolveSubqueries(bound, x.runSub); err != nil {
			return nil, err
		}
		if bound, err = binder.ResolveLimits(bound); err != nil {
			return nil, err
		}
		if bound, err = materializeRecursive(bound, x.runSub); err != nil {
			return nil, err
		}
		if bound, err = binder.MaterializeSRF(bound); err != nil {
			return nil, err
		}
		if bound, err = materializeSetOps(bound, x.runSub); err != nil {
			return nil, err
		}
		return materializeLateral(bound, x.runSub, streamSub)
	}
	return x, nil
}

// checkSources fails a query whose tables or views were dropped since it
// was bound.
func (e *Engine) checkSources(root plan.Node) error {
	for _, src := range plan.Sources(root) {
		if src.Kind == catalog.KindSystem {
			continue
		}
		if d, ok := e.lookup(src.Name); !ok || d.ID != src.ID {
			return sqlerr.New(sqlerr.UndefinedTable, "relation %q does not exist", src.Name)
		}
	}
	return nil
}

// markStoredKeys sets on the scans of root the columns each scanned view
// or table keeps its rows by, so that a filter fixing them reads one row
// (exec.lookupByKey). A view is keyed as its dataflow materializes it:
// by exec.UniqueKey of its plan.
func (e *Engine) markStoredKeys(root plan.Node) {
	for _, s := range plan.Scans(root) {
		if s.Rows != nil {
			continue
		}
		switch s.Object.Kind {
		case catalog.KindTable:
			s.StoredKey = exec.TableKey(s)
		case catalog.KindView:
			s.StoredKey = e.viewKey(s.Object)
		}
	}
}

// viewKey returns the columns view d's rows are stored by, nil if it
// keeps them unkeyed (or its plan cannot be made).
func (e *Engine) viewKey(d *catalog.Descriptor) []int {
	if k, ok := e.viewKeys.Load(d); ok {
		return k.([]int)
	}
	root, err := e.viewPlan(d)
	if err != nil {
		return nil
	}
	key := exec.UniqueKey(root)
	e.viewKeys.Store(d, key)
	return key
}

// runAndWrite runs a bound query over r and sends its rows to w as they
// are made (exec.StreamBatch), so that a read over a large table holds
// what its operators need, not its result.
func runAndWrite(ctx context.Context, root plan.Node, r meta.StateReader, w pgwire.RowWriter) (string, error) {
	n := 0
	err := exec.StreamBatch(ctx, root, r, func(row types.Row) error {
		n++
		return w.WriteRow(row)
	})
	if err != nil {
		return "", err
	}
	return selectTag(n), nil
}

// bindPlanParams returns a copy of the plan with parameter values in place
// of parameter markers (the plan itself is shared between executions).
func bindPlanParams(n plan.Node, vals []types.Datum) (plan.Node, error) {
	return bindPlan(n, vals, nil)
}

// bindPlan is bindPlanParams that also replaces each scan by what scan
// returns for it (when scan is not nil).
func bindPlan(n plan.Node, vals []types.Datum, scan func(*plan.Scan) (plan.Node, error)) (plan.Node, error) {
	return binder.MapPlan(n, func(e expr.Expr) (expr.Expr, error) {
		if e == nil || !expr.HasParams(e) {
			return e, nil
		}
		return expr.BindParams(e, vals)
	}, scan)
}

// prepareAsOf binds a SELECT against the catalog of a checkpoint or
// savepoint and runs it over that point's state.
func (s *session) prepareAsOf(stmt *front.Statement, id uint64, root plan.Node, params *binder.Params) *prepared {
	at := stmt.AsOf
	return &prepared{params: params, cols: root.Schema(), run: func(ctx context.Context, vals []types.Datum, w pgwire.RowWriter) (string, error) {
		bound, err := bindPlanParams(root, vals)
		if err != nil {
			return "", err
		}
		st, err := s.e.asOfReader(at)
		if err != nil {
			return "", err
		}
		defer st.release()
		if st.meta.ID != id {
			// The name now means another point (a savepoint released and
			// taken again): bind against that point's catalog.
			again, err := bindQueryIn(st, stmt, params)
			if err != nil {
				return "", err
			}
			if !sameColumns(again.Schema(), root.Schema()) {
				return "", sqlerr.New(sqlerr.ObjectNotInPrerequisiteState, "the savepoint this statement was prepared against has changed its columns; prepare it again")
			}
			if bound, err = bindPlanParams(again, vals); err != nil {
				return "", err
			}
		}
		return runAndWrite(ctx, bound, st.p.Store.DB(), w)
	}}
}

func sameColumns(a, b []types.Column) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Type != b[i].Type {
			return false
		}
	}
	return true
}
