package meta

import "streamdb/catalog"

// SetConstraints stores table d with constraints cons in place of its
// own: the foreign keys and constraints that DROP CONSTRAINT and DROP
// TABLE ... CASCADE drop (adding one validates the table's rows first,
// on sql's table write path). The caller holds ddlMu.
func (x *DDL) SetConstraints(d *catalog.Descriptor, cons []catalog.Constraint) error {
	next := *d
	if len(cons) == 0 {
		cons = nil
	}
	next.Constraints = cons
	return x.Replace(d, &next)
}
