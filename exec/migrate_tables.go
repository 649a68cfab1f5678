package exec

import (
	"slices"

	"streamdb/catalog"
	"streamdb/plan"
)

// planTables returns the stateful operators of view d's dataflow and
// the state tables each takes, as the builder numbers them
// (builder.opPrefix) for a view of format d.Dataflow: streaming plan
// root, and ups the plans of the views the dataflow computes itself. ok
// is false when that cannot be told without building the dataflow: a
// view over a view whose plan ups lacks, a node of a kind it does not
// know, or a view that records its layout (OpState, from an ALTER) but
// not for every stateful operator, or records it in ids of a format
// before DataflowNarrowRows (plan.PruneColumns rewrites the plan, so its
// ids are not those of the later formats). A recorded view's tables are
// those it records.
//
// It walks the plan as builder.build does: a node's own tables first,
// then its inputs in order; a subplan or a shared watermark scan the
// dataflow already computes takes none; a view a dataflow of a format
// before DataflowViewEdges computes itself is walked in place of its
// scan. Format migrations find the state they rewrite through it.
func planTables(d *catalog.Descriptor, root plan.Node, ups UpstreamPlans) ([]OpSlot, bool) {
	w := &tableWalk{d: d, ups: ups, next: firstOperatorIndex, seen: map[string]bool{}}
	if d.OpState != nil {
		if d.Dataflow < catalog.DataflowNarrowRows {
			return nil, false
		}
		w.recorded = stateIDs("", root)
	}
	if !w.walk(root) || w.unrecorded {
		return nil, false
	}
	return w.slots, true
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

// tableWalk is the state of planTables' walk.
type tableWalk struct {
	d     *catalog.Descriptor
	ups   UpstreamPlans
	next  uint16
	seen  map[string]bool // subplan and scan sharing keys built already
	slots []OpSlot
	// recorded names the plan's nodes by operator id when the view
	// records its layout: tables come from OpState, not from next;
	// unrecorded is set when a node has fewer tables recorded than it
	// takes.
	recorded   map[plan.Node]string
	unrecorded bool
}

// take gives n its next n state tables.
func (w *tableWalk) take(n plan.Node, tables int) {
	s := OpSlot{Node: n}
	if w.recorded != nil {
		id, ok := w.recorded[n]
		list := w.d.OpState[id]
		if !ok || len(list) < tables {
			w.unrecorded = true
			return
		}
		s.Indexes = append(s.Indexes, list[:tables]...)
		w.slots = append(w.slots, s)
		return
	}
	for range tables {
		s.Indexes = append(s.Indexes, w.next)
		w.next++
	}
	w.slots = append(w.slots, s)
}

// shared reports whether key names what the dataflow computes already,
// and records it.
func (w *tableWalk) shared(key string) bool {
	if key == "" {
		return false
	}
	if w.seen[key] {
		return true
	}
	w.seen[key] = true
	return false
}

func (w *tableWalk) walk(n plan.Node) bool {
	f := w.d.Dataflow
	if _, scan := n.(*plan.Scan); !scan {
		if key := subplanKey(f, n); key != "" && w.shared("subplan "+key) {
			return true
		}
	}
	switch x := n.(type) {
	case *plan.Scan:
		return w.scan(x)
	case *plan.Values:
		w.take(n, 1)
		return true
	case *plan.Filter, *plan.Project, *plan.Window, *plan.Union:
	case *plan.Join:
		w.take(n, 1)
	case *plan.Sort, *plan.Limit, *plan.TopN:
		t := plan.StreamingTopN(n)
		if t == nil {
			break
		}
		w.take(n, 1)
		return w.walk(t.Input)
	case *plan.Aggregate:
		tables := 1
		ao := appendOnly(x.Input)
		if f >= catalog.DataflowExtremaByValue && slices.ContainsFunc(x.Aggs, func(c plan.AggCall) bool { return storedExtremeCall(c, 0, ao) }) {
			tables++
		}
		w.take(n, tables)
	default:
		return false
	}
	for _, c := range n.Children() {
		if !w.walk(c) {
			return false
		}
	}
	return true
}

// scan is walk of a scan: a watermark operator's table for a stream with
// a WATERMARK (one per shared reader), the dataflow of a view computed in
// place before DataflowViewEdges, nothing for the other inputs.
func (w *tableWalk) scan(s *plan.Scan) bool {
	f := w.d.Dataflow
	if s.Object == nil {
		return false
	}
	switch s.Object.Kind {
	case catalog.KindStream:
		key := sharedScanKey(f, s)
		if s.Watermark != nil && (key == "" || !w.shared("scan "+key)) {
			w.take(s, 1)
		}
		return true
	case catalog.KindView:
		if f >= catalog.DataflowViewEdges && s.Object.ID != w.d.ID {
			return true // an edge
		}
		inner, ok := w.ups[s]
		return ok && w.walk(streamingPlan(f, inner))
	}
	return true
}
