package exec

import (
	"streamdb/catalog"
	"streamdb/plan"
)

// planTables returns the stateful operators of view d's dataflow and
// the state tables each takes, as the builder takes them for a view of
// format d.Dataflow: streaming plan root, and ups the plans of the views
// the dataflow computes itself. The operators are those StateSlots lists
// (streamStateSlots, so each slot's node is one of root's). A view that
// records its layout (OpState) takes the tables it records; one that does
// not yet (a view of a format before its layout is recorded at start)
// takes them in build order, numbered as RecordStateLayout numbers a new
// view's. ok is false when that cannot be told without building the
// dataflow: a view over a view whose plan ups lacks, a node of a kind it
// does not know, a view that records its layout but not for every
// stateful operator, or records it in ids of a format before
// DataflowNarrowRows (plan.PruneColumns rewrites the plan, so its ids are
// not those of the later formats). Format migrations find the state they
// rewrite through it.
func planTables(d *catalog.Descriptor, root plan.Node, ups UpstreamPlans) ([]OpSlot, bool) {
	if d.OpState != nil && d.Dataflow < catalog.DataflowNarrowRows {
		return nil, false
	}
	slots, err := streamStateSlots(d, root, ups)
	if err != nil {
		return nil, false
	}
	layout := *d
	if layout.OpState == nil {
		layout.NextOp = 0 // from the first operator index
		recordSlots(&layout, slots)
	}
	tables, err := stateTables(&layout, slots)
	if err != nil {
		return nil, false
	}
	// Each slot takes the next tables of its id, as builder.moreTables.
	out := make([]OpSlot, len(slots))
	for i, s := range slots {
		list := tables[s.ID]
		out[i] = OpSlot{Node: s.Node, ID: s.ID, Indexes: list[:s.Tables:s.Tables]}
		tables[s.ID] = list[s.Tables:]
	}
	return out, true
}

// oneTable returns the one operator of view d's dataflow (as for
// planTables) that as maps to a non-nil node, and its first state table;
// ok false when planTables cannot tell, or there is none or more than
// one.
func oneTable[T comparable](d *catalog.Descriptor, root plan.Node, ups UpstreamPlans, as func(plan.Node) T) (T, uint16, bool) {
	var none, found T
	slots, ok := planTables(d, root, ups)
	if !ok {
		return none, 0, false
	}
	var idx uint16
	for _, s := range slots {
		if x := as(s.Node); x != none {
			if found != none {
				return none, 0, false
			}
			found, idx = x, s.Indexes[0]
		}
	}
	return found, idx, found != none
}
