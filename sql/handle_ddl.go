package sql

import (
	"context"

	"streamdb/sql/front"
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
func (s *session) prepareCreateMaterializedView(_ context.Context, n *front.CreateMaterializedView, st *front.Statement, _ *boundParams) (*prepared, error) {
	// Bind now so that errors surface at Parse time, and again at run
	// time against the catalog of that moment.
	bind := s.e.bindView
	if n.NoData {
		bind = s.e.bindUnpopulated
	}
	if _, err := bind(st, n); err != nil {
		return nil, err
	}
	if st.NumParams > 0 {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "a materialized view cannot have parameters")
	}
	return command(func(ctx context.Context) (string, error) {
		if _, exists := s.e.lookup(n.Name); n.Alter || (n.Replace && exists) {
			return s.e.alterView(ctx, n, st)
		}
		return s.e.createView(ctx, n, st)
	}), nil
}

// prepareCreateView prepares CREATE VIEW (plain_views.go).
func (s *session) prepareCreateView(_ context.Context, n *front.CreateView, st *front.Statement, _ *boundParams) (*prepared, error) {
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
