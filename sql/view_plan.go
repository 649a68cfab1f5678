package sql

import (
	"streamdb/catalog"
	"streamdb/plan"
)

// The plans of views and their dataflows are meta's (meta/dataflow.go);
// these are the names the rest of sql calls them by.

// recordPlan stores in d the plan record of root (meta.DDL.RecordPlan).
func (e *Engine) recordPlan(d *catalog.Descriptor, root plan.Node) { e.ddl.RecordPlan(d, root) }

// viewPlan is the plan view d's dataflow is built from (meta.DDL.ViewPlan).
func (e *Engine) viewPlan(d *catalog.Descriptor) (plan.Node, error) { return e.ddl.ViewPlan(d) }

// startView starts the dataflow of view (or table) d built from root.
func (e *Engine) startView(d *catalog.Descriptor, root plan.Node) error {
	return e.ddl.StartView(d, root)
}

// sourceStreams lists the streams the dataflow of view d built from root
// reads, in the order of its source indexes.
func (e *Engine) sourceStreams(d *catalog.Descriptor, root plan.Node) ([]string, error) {
	return e.ddl.SourceStreams(d, root)
}
