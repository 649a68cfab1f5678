package sql

import (
	"context"
	"slices"

	"streamdb/catalog"
	"streamdb/meta"
)

// purgeHost is the live catalog and the binder as the changelog purger
// (meta.Purger) sees them.
type purgeHost struct{ e *Engine }

func (h purgeHost) Objects() []*catalog.Descriptor { return h.e.catalogObjects() }

// catalogObjects returns every object of the live catalog.
func (e *Engine) catalogObjects() []*catalog.Descriptor {
	e.catMu.RLock()
	defer e.catMu.RUnlock()
	objs := make([]*catalog.Descriptor, 0, len(e.objs))
	for _, d := range e.objs {
		objs = append(objs, d)
	}
	return objs
}

// NewViewsReplayTable: a view created now over table d reads d's
// changelog through a JetStream reader of its own, from the table's first
// message, when the runtime lists a source on d for it; a view that starts
// from the table's state reads no changelog of its own.
func (h purgeHost) NewViewsReplayTable(d *catalog.Descriptor) bool {
	root, err := tableScan(d)
	if err != nil {
		return true
	}
	probe := &catalog.Descriptor{Name: d.Name + "_probe", Kind: catalog.KindView, Dataflow: catalog.DataflowLatest}
	streams, err := h.e.sourceStreams(probe, root)
	return err != nil || slices.Contains(streams, d.Name)
}

func (h purgeHost) ViewSources(d *catalog.Descriptor) ([]string, error) {
	root, err := h.e.viewPlan(d)
	if err != nil {
		return nil, err
	}
	return h.e.sourceStreams(d, root)
}

func (h purgeHost) AfterPurge(ctx context.Context) { h.e.tables.RemoveTxns(ctx) }

// startPurging has a purge of changelogs follow every completed
// checkpoint; the purge holds ddlMu. A server replaying another
// cluster's epochs (--replay-control) purges nothing: the changelogs it
// reads are that cluster's.
func (e *Engine) startPurging() {
	if e.rt.Following() {
		return
	}
	e.purge = meta.NewPurger(meta.PurgerConfig{
		Host: purgeHost{e}, Catalog: &e.ddlMu, Broker: e.node.Broker(), Coord: e.coord,
		Positions: e.rt.Positions, Stored: e.state.Position, Log: e.log,
	})
	e.purge.Start()
}

// stopPurging waits for a running purge and refuses new ones.
func (e *Engine) stopPurging() {
	if e.purge != nil {
		e.purge.Stop()
	}
}
