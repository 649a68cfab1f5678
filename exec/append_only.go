package exec

import (
	"streamdb/catalog"
	"streamdb/plan"
)

// appendOnly reports whether n's output only ever grows (no retractions)
// in a view of layout dataflow. It decides how a view keeps its rows and
// which accumulators its aggregates use, both part of the state's format,
// so it is fixed per layout: from DataflowAppendOnlyJoins on, an inner
// join of append-only inputs counts as append-only.
func appendOnly(dataflow catalog.FormatVersion, n plan.Node) bool {
	if dataflow >= catalog.DataflowAppendOnlyJoins {
		return plan.AppendOnlyJoins(n)
	}
	return plan.AppendOnly(n)
}
