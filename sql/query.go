package sql

import (
	"context"

	"streamdb/exec"
	"streamdb/expr"
	"streamdb/pgwire"
	"streamdb/plan"
	"streamdb/sql/front"
	"streamdb/sqlerr"
	"streamdb/storage"
	"streamdb/types"
)

// prepareQuery binds a SELECT for ad-hoc execution over committed state.
func (s *session) prepareQuery(root plan.Node, params *boundParams) *prepared {
	s.e.markStoredKeys(root)
	return &prepared{params: params, cols: root.Schema(), run: func(ctx context.Context, vals []types.Datum, w pgwire.RowWriter) (string, error) {
		if err := s.e.checkPopulated(root); err != nil {
			return "", err
		}
		if err := s.e.checkViewsRunning(root); err != nil {
			return "", err
		}
		if err := s.waitAcknowledged(ctx, root); err != nil {
			return "", err
		}
		limit, _ := parseMemory(s.settings["query_max_memory"])
		ctx = exec.WithMemoryLimit(ctx, limit)
		s.e.stateMu.RLock()
		defer s.e.stateMu.RUnlock()
		if s.tx != nil {
			r, scan, done, err := s.txRead(ctx, root)
			if err != nil {
				return "", err
			}
			defer done()
			bound, err := bindPlan(root, vals, scan)
			if err != nil {
				return "", err
			}
			if err := s.e.checkSources(bound); err != nil {
				return "", err
			}
			return runAndWrite(ctx, bound, r, w)
		}
		bound, err := bindPlanParams(root, vals)
		if err != nil {
			return "", err
		}
		if err := s.e.checkSources(bound); err != nil {
			return "", err
		}
		snap := s.e.store.Snapshot()
		defer snap.Close()
		return runAndWrite(ctx, bound, snap, w)
	}}
}

// checkSources fails a query whose tables or views were dropped since it
// was bound.
func (e *Engine) checkSources(root plan.Node) error {
	for _, src := range plan.Sources(root) {
		if src.Kind == storage.KindSystem {
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
		case storage.KindTable:
			s.StoredKey = exec.TableKey(s)
		case storage.KindView:
			s.StoredKey = e.viewKey(s.Object)
		}
	}
}

// viewKey returns the columns view d's rows are stored by, nil if it
// keeps them unkeyed (or its plan cannot be made).
func (e *Engine) viewKey(d *storage.Descriptor) []int {
	if k, ok := e.viewKeys.Load(d); ok {
		return k.([]int)
	}
	root, err := e.planView(d.Query)
	if err != nil {
		return nil
	}
	key := exec.UniqueKey(root)
	e.viewKeys.Store(d, key)
	return key
}

// runAndWrite runs a bound query over r and sends its rows to w.
func runAndWrite(ctx context.Context, root plan.Node, r storage.Reader, w pgwire.RowWriter) (string, error) {
	rows, err := exec.RunBatch(ctx, root, r)
	if err != nil {
		return "", err
	}
	for _, row := range rows {
		if err := w.WriteRow(row); err != nil {
			return "", err
		}
	}
	return selectTag(len(rows)), nil
}

// bindPlanParams returns a copy of the plan with parameter values in place
// of parameter markers (the plan itself is shared between executions).
func bindPlanParams(n plan.Node, vals []types.Datum) (plan.Node, error) {
	return bindPlan(n, vals, nil)
}

// bindPlan is bindPlanParams that also replaces each scan by what scan
// returns for it (when scan is not nil).
func bindPlan(n plan.Node, vals []types.Datum, scan func(*plan.Scan) (plan.Node, error)) (plan.Node, error) {
	var firstErr error
	bind := func(e expr.Expr) expr.Expr {
		if e == nil || !expr.HasParams(e) {
			return e
		}
		out, err := expr.BindParams(e, vals)
		if err != nil && firstErr == nil {
			firstErr = err
		}
		return out
	}
	bindAll := func(es []expr.Expr) []expr.Expr {
		out := make([]expr.Expr, len(es))
		for i, e := range es {
			out[i] = bind(e)
		}
		return out
	}
	var walk func(plan.Node) plan.Node
	walk = func(n plan.Node) plan.Node {
		switch n := n.(type) {
		case *plan.Filter:
			return &plan.Filter{Input: walk(n.Input), Cond: bind(n.Cond)}
		case *plan.Project:
			return &plan.Project{Input: walk(n.Input), Exprs: bindAll(n.Exprs), Cols: n.Cols}
		case *plan.Aggregate:
			aggs := make([]plan.AggCall, len(n.Aggs))
			for i, a := range n.Aggs {
				a.Arg = bind(a.Arg)
				aggs[i] = a
			}
			return &plan.Aggregate{Input: walk(n.Input), GroupBy: bindAll(n.GroupBy), Aggs: aggs, Cols: n.Cols}
		case *plan.Sort:
			keys := make([]plan.SortKey, len(n.Keys))
			for i, k := range n.Keys {
				k.Expr = bind(k.Expr)
				keys[i] = k
			}
			return &plan.Sort{Input: walk(n.Input), Keys: keys}
		case *plan.Window:
			return &plan.Window{Input: walk(n.Input), TimeCol: n.TimeCol, Size: n.Size, Slide: n.Slide, Cols: n.Cols}
		case *plan.Join:
			return &plan.Join{Kind: n.Kind, Left: walk(n.Left), Right: walk(n.Right),
				LeftKeys: bindAll(n.LeftKeys), RightKeys: bindAll(n.RightKeys), Cond: bind(n.Cond), Cols: n.Cols}
		case *plan.Union:
			inputs := make([]plan.Node, len(n.Inputs))
			for i, in := range n.Inputs {
				inputs[i] = walk(in)
			}
			return &plan.Union{Inputs: inputs, Cols: n.Cols}
		case *plan.Limit:
			return &plan.Limit{Input: walk(n.Input), Count: n.Count, Offset: n.Offset}
		case *plan.TopN:
			t := *n
			t.Input, t.PartitionBy = walk(n.Input), bindAll(n.PartitionBy)
			t.Order = make([]plan.SortKey, len(n.Order))
			for i, k := range n.Order {
				k.Expr = bind(k.Expr)
				t.Order[i] = k
			}
			return &t
		case *plan.Values:
			rows := make([][]expr.Expr, len(n.Rows))
			for i, r := range n.Rows {
				rows[i] = bindAll(r)
			}
			return &plan.Values{Rows: rows, Cols: n.Cols}
		case *plan.Scan:
			if scan == nil {
				return n
			}
			out, err := scan(n)
			if err != nil && firstErr == nil {
				firstErr = err
			}
			return out
		}
		return n
	}
	out := walk(n)
	return out, firstErr
}

// prepareAsOf binds a SELECT against the catalog of a checkpoint or
// savepoint and runs it over that point's state.
func (s *session) prepareAsOf(stmt *front.Statement, id uint64, root plan.Node, params *boundParams) *prepared {
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
			again, err := s.e.bindQueryIn(st, stmt, params)
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
		return runAndWrite(ctx, bound, st.store.DB(), w)
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
