package exec

import (
	"streamdb/catalog"
	"streamdb/plan"
)

// UpstreamPlans holds, for each scan of a view that a view's dataflow
// computes itself (ExpandsView), the plan of the scanned view, bound
// afresh for that scan: two scans of one view build two sets of
// operators, with state and watermarks of their own. It is keyed by the
// scan node, which the streaming rules keep (plan.RewriteStreaming leaves
// scans as they are), and holds the scans of those plans too, down to the
// streams and tables. The caller, which owns the catalog, computes it
// before StartView or SourceStreams (sql: Engine.upstreamPlans).
type UpstreamPlans map[*plan.Scan]plan.Node

// ExpandsView reports whether the dataflow of view desc computes the view
// scanned by s itself, from the streams under it, rather than reading that
// view's changes: every view a view of a format before
// catalog.DataflowViewEdges scans.
func ExpandsView(desc *catalog.Descriptor, s *plan.Scan) bool {
	if s.Object.Kind != catalog.KindView {
		return false
	}
	return desc.Dataflow < catalog.DataflowViewEdges || s.Object.ID == desc.ID
}
