package sql

import (
	"context"

	"streamdb/catalog"
	"streamdb/front"
	"streamdb/sqlerr"
)

// refreshView runs REFRESH MATERIALIZED VIEW. A view created WITH NO
// DATA is populated (populateView). Otherwise a streamdb view applies
// every change as it arrives, so there is nothing to recompute: the
// statement returns once the view holds every write published before it,
// as FLUSH does, which is what a client that refreshes before reading
// wants. Tools that restore a dump or keep PostgreSQL's habit run
// unchanged.
func (e *Engine) refreshView(ctx context.Context, n *front.RefreshMaterializedView) (string, error) {
	const tag = "REFRESH MATERIALIZED VIEW"
	d, ok := e.lookup(n.Name)
	if !ok || (n.Schema != "" && n.Schema != "public") {
		return "", sqlerr.New(sqlerr.UndefinedTable, "relation %q does not exist", n.Name)
	}
	if d.Kind == catalog.KindUnpopulatedView {
		return tag, e.populateView(ctx, d, n.Concurrently)
	}
	if d.Kind != catalog.KindView {
		return "", sqlerr.New(sqlerr.FeatureNotSupported, "%q is not a materialized view", n.Name)
	}
	return tag, e.flush(ctx)
}
