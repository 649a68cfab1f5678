package exec

import (
	"streamdb/plan"
	"streamdb/storage"
)

// appendOnly reports whether n's output only ever grows (no retractions)
// in a view of layout dataflow. It decides how a view keeps its rows and
// which accumulators its aggregates use, both part of the state's format,
// so it is fixed per layout: from DataflowAppendOnlyJoins on, an inner
// join of append-only inputs is append-only (it emits an insert per match
// of an inserted row and nothing else); before, only streams and what
// filters, projects, windows and unions them were (plan.AppendOnly).
func appendOnly(dataflow int, n plan.Node) bool {
	if dataflow < storage.DataflowAppendOnlyJoins {
		return plan.AppendOnly(n)
	}
	switch n := n.(type) {
	case *plan.Join:
		return n.Kind == plan.InnerJoin && appendOnly(dataflow, n.Left) && appendOnly(dataflow, n.Right)
	case *plan.Filter, *plan.Project, *plan.Window:
		return appendOnly(dataflow, n.Children()[0])
	case *plan.Union:
		for _, in := range n.Inputs {
			if !appendOnly(dataflow, in) {
				return false
			}
		}
		return true
	}
	return plan.AppendOnly(n)
}
