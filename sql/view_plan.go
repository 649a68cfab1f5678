package sql

import (
	"streamdb/catalog"
	"streamdb/exec"
	"streamdb/meta"
	"streamdb/plan"
)

// recordPlan stores in d the plan record of root, the plan view d is
// created with (plan.Encode), so that every later start builds its
// dataflow from that plan and not from its SQL bound again: operator
// state stays with the operators it belongs to whatever the binder of a
// later release makes of the SQL. A plan that cannot be recorded (an
// expression the record cannot rebuild) leaves d without one, logged: the
// view is then bound from its SQL at each start, as views created before
// plan records are.
func (e *Engine) recordPlan(d *catalog.Descriptor, root plan.Node) {
	data, err := plan.Encode(root, e.lookup)
	if err != nil {
		e.log.Warn("the plan of the materialized view is not recorded; it is bound from its SQL at each start", "view", d.Name, "err", err)
		return
	}
	d.Plan = data
}

// viewPlan is the plan view d's dataflow is built from: its plan record,
// or, for a view created without one, its SQL bound again (meta.ViewPlan).
func (e *Engine) viewPlan(d *catalog.Descriptor) (plan.Node, error) {
	return meta.ViewPlan(d, e.lookup, e.planView)
}

// upstreamPlans binds, for the dataflow of view d built from root, the
// plan of every view it computes itself (exec.ExpandsView): once per scan,
// and down through those plans.
func (e *Engine) upstreamPlans(d *catalog.Descriptor, root plan.Node) (exec.UpstreamPlans, error) {
	return meta.UpstreamPlans(d, root, e.viewPlan)
}

// startView starts the dataflow of view (or table) d built from root.
func (e *Engine) startView(d *catalog.Descriptor, root plan.Node) error {
	ups, err := e.upstreamPlans(d, root)
	if err != nil {
		return err
	}
	return e.rt.StartView(d, root, ups)
}

// sourceStreams lists the streams the dataflow of view d built from root
// reads, in the order of its source indexes.
func (e *Engine) sourceStreams(d *catalog.Descriptor, root plan.Node) ([]string, error) {
	ups, err := e.upstreamPlans(d, root)
	if err != nil {
		return nil, err
	}
	return exec.SourceStreams(d, root, ups), nil
}
