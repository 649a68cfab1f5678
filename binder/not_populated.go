package binder

import "streamdb/sqlerr"

// NotPopulated is the error of reading an unpopulated view.
func NotPopulated(name string) error {
	return sqlerr.New(sqlerr.ObjectNotInPrerequisiteState, "materialized view \"%s\" has not been populated", name).
		WithHint("Use the REFRESH MATERIALIZED VIEW command.")
}
