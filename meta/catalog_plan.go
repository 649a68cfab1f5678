package meta

import (
	"errors"

	"streamdb/catalog"
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
