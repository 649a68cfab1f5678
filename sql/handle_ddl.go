package sql

import (
	"context"
	"maps"

	"streamdb/binder"
	"streamdb/catalog"
	"streamdb/front"
	"streamdb/plan"
	"streamdb/sqlerr"
)

// The handlers of the DDL statements that do more than call the engine
// (those that only call it are registered with their engine method in
// handle.go), and of FLUSH and ALTER SYSTEM.

// runCreateSource runs CREATE STREAM or CREATE TABLE once its columns'
// defaults are checked.
func (s *session) runCreateSource(ctx context.Context, n *front.CreateSource) (string, error) {
	if err := s.checkDefaults(n); err != nil {
		return "", err
	}
	return s.e.createSource(ctx, n)
}

// prepareCreateMaterializedView prepares CREATE MATERIALIZED VIEW, and
// ALTER MATERIALIZED VIEW or CREATE OR REPLACE of an existing view.
func (s *session) prepareCreateMaterializedView(_ context.Context, n *front.CreateMaterializedView, st *front.Statement, _ *binder.Params) (*prepared, error) {
	// Bind now so that errors surface at Parse time; the run uses this
	// plan unless the catalog changed since (boundView).
	bind := s.e.bindView
	if n.NoData {
		bind = s.e.bindUnpopulated
	}
	bound, err := s.e.bindOnce(func() (plan.Node, error) { return bind(st, n) })
	if err != nil {
		return nil, err
	}
	if st.NumParams > 0 {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "a materialized view cannot have parameters")
	}
	return command(func(ctx context.Context) (string, error) {
		if _, exists := s.e.lookup(n.Name); n.Alter || (n.Replace && exists) {
			if n.NoData {
				// Bound as a view WITH NO DATA is; ALTER binds as
				// CREATE does.
				return s.e.alterView(ctx, n, st, func() (plan.Node, error) { return s.e.bindView(st, n) })
			}
			return s.e.alterView(ctx, n, st, bound.plan)
		}
		return s.e.createView(ctx, n, st, bound.plan)
	}), nil
}

// boundView is the query of one CREATE MATERIALIZED VIEW bound at
// Prepare, with the catalog it was bound against (descriptors by name:
// a catalog change replaces a descriptor, never edits one). Its run uses
// that plan when the catalog is still the same, and binds the query
// again when it is not, as PostgreSQL analyses a prepared statement
// again after a change of what it reads. The plan is handed out once,
// since a run may rewrite it; a later run binds again. The session that
// prepared the statement runs it, one run at a time.
type boundView struct {
	e    *Engine
	bind func() (plan.Node, error)
	root plan.Node
	objs map[string]*catalog.Descriptor
}

// bindOnce binds with bind and keeps the plan for the run, unless the
// catalog changed while it bound.
func (e *Engine) bindOnce(bind func() (plan.Node, error)) (*boundView, error) {
	before := e.catalogNow()
	root, err := bind()
	if err != nil {
		return nil, err
	}
	b := &boundView{e: e, bind: bind}
	if after := e.catalogNow(); maps.Equal(before, after) {
		b.root, b.objs = root, after
	}
	return b, nil
}

// plan is the plan of the view's query for a run: the one bound at
// Prepare when the catalog is the same, else a new bind. The caller holds
// ddlMu, so the catalog does not change until it is done with the plan.
func (b *boundView) plan() (plan.Node, error) {
	root, objs := b.root, b.objs
	b.root, b.objs = nil, nil
	if root != nil && maps.Equal(objs, b.e.catalogNow()) {
		return root, nil
	}
	return b.bind()
}

// catalogNow is the live catalog's descriptors by name.
func (e *Engine) catalogNow() map[string]*catalog.Descriptor {
	e.catMu.RLock()
	defer e.catMu.RUnlock()
	return maps.Clone(e.objs)
}

// prepareCreateView prepares CREATE VIEW (plain_views.go).
func (s *session) prepareCreateView(_ context.Context, n *front.CreateView, st *front.Statement, _ *binder.Params) (*prepared, error) {
	return command(func(ctx context.Context) (string, error) { return s.e.createPlainView(ctx, n, st) }), nil
}

// prepareDrop prepares DROP of relations, or of the source that mirrors a
// PostgreSQL database (pg_source.go).
func (s *session) prepareDrop(n *front.Drop) (*prepared, error) {
	if src := s.e.pgSourceOf(n); src != nil {
		return command(func(ctx context.Context) (string, error) {
			return "DROP SOURCE", s.e.dropPGSource(ctx, src, n.Cascade)
		}), nil
	}
	return command(func(ctx context.Context) (string, error) { return s.e.drop(ctx, n) }), nil
}

// prepareCreateSink prepares CREATE SINK, owned by the session's user.
func (s *session) prepareCreateSink(n *front.CreateSink) (*prepared, error) {
	owner := s.sinkOwner()
	return command(func(ctx context.Context) (string, error) { return s.e.createSink(ctx, n, owner) }), nil
}

// runFlush runs FLUSH.
func (s *session) runFlush(ctx context.Context, _ *front.Flush) (string, error) {
	return "FLUSH", s.e.flush(ctx)
}

// runAlterSystem runs ALTER SYSTEM PAUSE and RESUME, which pause and
// resume reading the sources.
func (s *session) runAlterSystem(_ context.Context, n *front.AlterSystem) (string, error) {
	s.e.rt.SetPaused(n.Action == front.SystemPause)
	s.e.log.Info("sources", "paused", n.Action == front.SystemPause)
	return "ALTER SYSTEM", nil
}
