package exec

import "streamdb/plan"

// appendOnly reports whether n's output only ever grows (no retractions).
// It decides how a view keeps its rows and which accumulators its
// aggregates use, both part of the state's format: an inner join of
// append-only inputs counts as append-only in every format read
// (DataflowAppendOnlyJoins on); views of older formats take the step to
// it only when no such join changes (exec/migrate.go).
func appendOnly(n plan.Node) bool {
	return plan.AppendOnlyJoins(n)
}
