package meta

import (
	"errors"

	"streamdb/catalog"
	"streamdb/exec"
	"streamdb/plan"
	"streamdb/sqlerr"
)

// ViewPlan is the plan materialized view d's dataflow is built from: its
// stored plan record, decoded with the objects it reads looked up in the
// live catalog (lookup), or, for a view stored without one (created
// before plans were recorded, or with a plan the record cannot hold), its
// query bound again by bind, sql's binder. A record that does not decode
// keeps the SQLSTATE plan.Decode gives it (0A000 for a record version
// this binary does not read) or is XX001 (data_corrupted); the message
// names the view.
func ViewPlan(d *catalog.Descriptor, lookup func(string) (*catalog.Descriptor, bool), bind func(query string) (plan.Node, error)) (plan.Node, error) {
	if len(d.Plan) == 0 {
		return bind(d.Query)
	}
	root, err := plan.Decode(d.Plan, lookup)
	if err != nil {
		var se *sqlerr.Error
		if errors.As(err, &se) {
			return nil, &sqlerr.Error{Code: se.Code, Message: "materialized view " + d.Name + ": " + se.Message, Hint: se.Hint}
		}
		// XX001, data_corrupted: the record is there but does not read.
		return nil, sqlerr.New(sqlerr.DataCorrupted, "the stored plan of materialized view %s cannot be read: %v", d.Name, err)
	}
	return root, nil
}

// UpstreamPlans gives, for the dataflow of view d built from root, the
// plan of every view it computes itself (exec.ExpandsView), from viewPlan:
// once per scan, and down through those plans.
func UpstreamPlans(d *catalog.Descriptor, root plan.Node, viewPlan func(*catalog.Descriptor) (plan.Node, error)) (exec.UpstreamPlans, error) {
	var ups exec.UpstreamPlans
	var walk func(plan.Node) error
	walk = func(n plan.Node) error {
		for _, s := range plan.Scans(n) {
			if !exec.ExpandsView(d, s) {
				continue
			}
			inner, err := viewPlan(s.Object)
			if err != nil {
				return err
			}
			if ups == nil {
				ups = exec.UpstreamPlans{}
			}
			ups[s] = inner
			if err := walk(inner); err != nil {
				return err
			}
		}
		return nil
	}
	return ups, walk(root)
}
