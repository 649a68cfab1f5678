package sql

import (
	"context"

	"streamdb/catalog"
	"streamdb/front"
	"streamdb/meta"
	"streamdb/plan"
	"streamdb/sqlerr"
)

// groupRestorer is what ALTER MATERIALIZED VIEW ... RESTORE GROUP asks of
// the node (meta.Node): a view-group read from a checkpoint and checked
// against the catalog, and its state swapped in.
type groupRestorer interface {
	ReadGroup(dir, view string, descs []*catalog.Descriptor) (*meta.GroupRestore, error)
	RestoreGroup(g *meta.GroupRestore) error
}

// runRestoreViewGroup runs ALTER MATERIALIZED VIEW v RESTORE GROUP FROM
// 'dir': the views of v's view-group stop, their state and source
// positions become those of the checkpoint at dir (another server's,
// over the same streams), and they start again from there. The server's
// other views keep running. It is the restore a move of a group between
// servers of a cluster starts with.
func (s *session) runRestoreViewGroup(ctx context.Context, n *front.RestoreViewGroup) (string, error) {
	e := s.e
	if s.tx != nil {
		// It replaces committed state at once: nothing a block could undo.
		return "", sqlerr.New(sqlerr.ActiveSQLTransaction, "ALTER MATERIALIZED VIEW ... RESTORE GROUP cannot run inside a transaction block")
	}
	if e.groups == nil {
		return "", sqlerr.New(sqlerr.FeatureNotSupported, "this server cannot restore view-groups")
	}
	e.ddlMu.Lock()
	defer e.ddlMu.Unlock()
	d, ok := e.lookup(n.View)
	if !ok || d.Kind != catalog.KindView {
		return "", sqlerr.New(sqlerr.UndefinedTable, "materialized view %q does not exist", n.View)
	}
	g, err := e.groups.ReadGroup(n.Dir, d.Name, e.catalogObjects())
	if err != nil {
		return "", err
	}
	// Every plan first: a view whose plan does not build stops nothing.
	var roots []*catalog.Descriptor
	var plans []plan.Node
	for _, name := range g.Roots {
		v, ok := e.lookup(name)
		if !ok {
			return "", sqlerr.New(sqlerr.UndefinedTable, "materialized view %q does not exist", name)
		}
		root, err := e.viewPlan(v)
		if err != nil {
			return "", err
		}
		roots, plans = append(roots, v), append(plans, root)
	}
	// Stopping the group's roots stops the views that read them; each
	// root started again starts its readers, from their restored state.
	for _, v := range roots {
		e.rt.Remove(v.ID)
	}
	if err := e.groups.RestoreGroup(g); err != nil {
		return "", sqlerr.New(sqlerr.InternalError, "restore the view-group of %s: %v", d.Name, err).
			WithHint("Its views stay stopped, their state part restored: run the statement again.")
	}
	for i, v := range roots {
		if err := e.startView(v, plans[i]); err != nil {
			return "", sqlerr.New(sqlerr.InternalError, "start materialized view %s after its restore: %v", v.Name, err)
		}
	}
	e.log.Info("restored view-group", "view", d.Name, "from", n.Dir, "epoch", g.Epoch)
	return "ALTER MATERIALIZED VIEW", nil
}
