package sql

import (
	"context"
	"fmt"
	"maps"

	"streamdb/binder"
	"streamdb/catalog"
	"streamdb/front"
	"streamdb/pgwire"
	"streamdb/plan"
	"streamdb/sqlerr"
)

// Materialized views created WITH NO DATA. PostgreSQL defines such a
// view without running its query, and reading it fails (55000) until
// REFRESH MATERIALIZED VIEW populates it. pg_dump writes every
// materialized view this way, after the tables and before their rows
// and primary keys, and refreshes the views at the end of the dump.
//
// streamdb keeps such a view as a catalog entry of kind
// catalog.KindUnpopulatedView: its query text, columns, options, the
// relations it reads and the indexes created on it, with no plan, no
// state and no dataflow, so ALTER TABLE ... ADD PRIMARY KEY on a table
// it reads is not held back by a plan made without the key. Its first
// REFRESH binds the query against the catalog of that moment and
// creates the view as CREATE MATERIALIZED VIEW does (its backfill
// included), under the same id, creation time (so owner and grants) and
// comments; from then on it is an ordinary materialized view, always
// current. A REFRESH that fails leaves it unpopulated, as in PostgreSQL.

// populatedCatalog is the catalog a WITH NO DATA view's query is
// checked against: an unpopulated view reads as the materialized view
// it will be, so that one such view may read another, as pg_dump
// creates them (each is bound again, for real, at its REFRESH).
type populatedCatalog struct{ *Engine }

func (c populatedCatalog) lookup(name string) (*catalog.Descriptor, bool) {
	d, ok := c.Engine.lookup(name)
	if ok && d.Kind == catalog.KindUnpopulatedView {
		v := *d
		v.Kind = catalog.KindView
		return &v, true
	}
	return d, ok
}

// bindUnpopulated binds the query of CREATE MATERIALIZED VIEW ... WITH NO
// DATA (binder.BindUnpopulatedView) against populatedCatalog.
func (e *Engine) bindUnpopulated(st *front.Statement, n *front.CreateMaterializedView) (plan.Node, error) {
	return binder.BindUnpopulatedView(bindCatalog{populatedCatalog{e}}, st, n)
}

// createUnpopulatedView runs CREATE MATERIALIZED VIEW ... WITH NO DATA:
// the query is checked as CREATE would (names, types, what a view can
// compute) and the view stored, unpopulated. bind binds the query as
// bindUnpopulated does, under ddlMu.
func (e *Engine) createUnpopulatedView(ctx context.Context, n *front.CreateMaterializedView, st *front.Statement, bind func() (plan.Node, error)) (string, error) {
	const tag = "CREATE MATERIALIZED VIEW"
	if n.Schema != "" && n.Schema != "public" {
		return "", sqlerr.New(sqlerr.FeatureNotSupported, "schema %q does not exist; streamdb has only the public schema", n.Schema)
	}
	e.ddlMu.Lock()
	defer e.ddlMu.Unlock()
	if e.relationExists(n.Name) {
		if n.IfNotExists {
			pgwire.Notice(ctx, fmt.Sprintf("relation %q already exists, skipping", n.Name), "")
			return tag, nil
		}
		return "", sqlerr.New(sqlerr.DuplicateTable, "relation %q already exists", n.Name)
	}
	opts, err := checkViewOptions(n.Options)
	if err != nil {
		return "", err
	}
	root, err := bind()
	if err != nil {
		return "", err
	}
	if err := binder.CheckStreamable(root); err != nil {
		return "", err
	}
	d, err := viewDescriptor(n, root, opts)
	if err != nil {
		return "", err
	}
	d.Kind, d.Dataflow, d.VNodes = catalog.KindUnpopulatedView, 0, 0
	d.DependsOn = e.plainViewsNamed(d.DependsOn, st, n.Query)
	if err := e.persist(d); err != nil {
		return "", err
	}
	e.log.Info("created materialized view WITH NO DATA", "view", d.Name)
	return tag, e.ddlCheckpoint(ctx)
}

// populateView runs REFRESH MATERIALIZED VIEW on an unpopulated view:
// it creates the view from its stored definition and waits for its
// backfill.
func (e *Engine) populateView(ctx context.Context, u *catalog.Descriptor, concurrently bool) error {
	if concurrently {
		return sqlerr.New(sqlerr.FeatureNotSupported, "CONCURRENTLY cannot be used when the materialized view is not populated").
			WithHint("Run REFRESH MATERIALIZED VIEW %s without CONCURRENTLY.", u.Name)
	}
	st, err := front.Parse("CREATE MATERIALIZED VIEW " + quoteIdent(u.Name) + " AS " + u.Query)
	if err != nil {
		return err
	}
	n, ok := st.Node.(*front.CreateMaterializedView)
	if !ok {
		return sqlerr.New(sqlerr.InternalError, "the stored query of materialized view %s does not parse as a query", u.Name)
	}
	for _, c := range u.Columns {
		n.Columns = append(n.Columns, c.Name)
	}
	n.Options = maps.Clone(u.Options)
	d, root, err := e.installView(ctx, n, st, u, func() (plan.Node, error) { return e.bindView(st, n) })
	if err != nil {
		return err
	}
	return e.backfillView(ctx, d, root, func(ctx context.Context, d *catalog.Descriptor) { e.ddl.Unpopulate(ctx, d, u) })
}
