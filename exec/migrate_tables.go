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
// is false when that cannot be told without building the dataflow: an
// altered view (its tables follow its operator ids, OpState), a view over
// a view whose plan ups lacks, or a node of a kind it does not know.
//
// It walks the plan as builder.build does: a node's own tables first,
// then its inputs in order; a subplan or a shared watermark scan the
// dataflow already computes takes none; a view a dataflow of a format
// before DataflowViewEdges computes itself is walked in place of its
// scan. Format migrations find the state they rewrite through it.
func planTables(d *catalog.Descriptor, root plan.Node, ups UpstreamPlans) ([]OpSlot, bool) {
	if d.OpState != nil {
		return nil, false
	}
	w := &tableWalk{d: d, ups: ups, next: firstOperatorIndex, seen: map[string]bool{}}
	if !w.walk(root) {
		return nil, false
	}
	return w.slots, true
}

// tableWalk is the state of planTables' walk.
type tableWalk struct {
	d     *catalog.Descriptor
	ups   UpstreamPlans
	next  uint16
	seen  map[string]bool // subplan and scan sharing keys built already
	slots []OpSlot
}

// take gives n its next n state tables.
func (w *tableWalk) take(n plan.Node, tables int) {
	s := OpSlot{Node: n}
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
