package sql

import (
	"errors"

	"streamdb/catalog"
	"streamdb/plan"
	"streamdb/sqlerr"
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
// or, for a view created without one, its SQL bound again.
func (e *Engine) viewPlan(d *catalog.Descriptor) (plan.Node, error) {
	if len(d.Plan) == 0 {
		return e.planView(d.Query)
	}
	root, err := plan.Decode(d.Plan, e.lookup)
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
