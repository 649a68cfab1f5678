package exec

import (
	"fmt"
	"slices"

	"streamdb/catalog"
	"streamdb/plan"
	"streamdb/sqlerr"
)

// A view's operators find their state tables by operator id: the view's
// descriptor maps each id to the indexes of its tables
// (catalog.Descriptor.OpState), recorded when the view is created
// (RecordStateLayout), rewritten by ALTER MATERIALIZED VIEW, and recorded
// at start for views created before (meta's format migration). The
// stateful operators a dataflow builds, their ids and how many tables
// each takes follow from the view's plan and format alone
// (StateSlots); the builder takes its tables through that list and
// refuses to start when what it built differs from it, so the two cannot
// drift.

// StateSlot is one stateful operator of a view's dataflow, in the order
// the builder builds them: its node in the streaming plan, its operator
// id and how many state tables it takes. An operator built twice (a node
// two parts of the plan share, below the formats that share subplans) is
// two slots with one id.
type StateSlot struct {
	Node   plan.Node
	ID     string
	Tables int
}

// StateSlots lists the stateful operators the dataflow of view desc,
// built from bound plan root (ups: the plans of the views it computes
// itself, as for StartView), would have, without building it: no reader
// starts and nothing is read from or written to the store.
func StateSlots(desc *catalog.Descriptor, root plan.Node, ups UpstreamPlans) ([]StateSlot, error) {
	return streamStateSlots(desc, streamingPlan(desc.Dataflow, root), ups)
}

// streamStateSlots is StateSlots of stream, a plan the streaming rules of
// desc's format rewrote already: its slots hold stream's own nodes (and
// those of the views it computes itself, rewritten here).
func streamStateSlots(desc *catalog.Descriptor, stream plan.Node, ups UpstreamPlans) ([]StateSlot, error) {
	w := &layoutWalk{desc: desc, ups: ups, ids: stateIDs("", stream)}
	if err := w.walk(stream); err != nil {
		return nil, err
	}
	return w.slots, nil
}

// stateIDs names the nodes of streaming plan root for their state: by
// operator id (plan.NodeIDs), each after prefix and a slash when prefix
// is set (the nodes of a view a dataflow computes itself, prefix the id
// of its scan). A plan that cannot be recorded has no operator ids; its
// nodes are named by kind and walk position, which stay the same for the
// same plan (such a view is bound from its SQL at each start and cannot
// be altered).
func stateIDs(prefix string, root plan.Node) map[plan.Node]string {
	ids, err := plan.NodeIDs(root)
	if err != nil {
		ids = map[plan.Node]string{}
		var walk func(plan.Node)
		walk = func(n plan.Node) {
			if _, ok := ids[n]; ok {
				return
			}
			ids[n] = fmt.Sprintf("%s@%d", nodeKind(n), len(ids))
			for _, c := range n.Children() {
				walk(c)
			}
		}
		walk(root)
	}
	if prefix == "" {
		return ids
	}
	for n, id := range ids {
		ids[n] = prefix + "/" + id
	}
	return ids
}

// layoutWalk walks a streaming plan as builder.build does, counting the
// state tables each operator takes.
type layoutWalk struct {
	desc     *catalog.Descriptor
	ups      UpstreamPlans
	ids      map[plan.Node]string
	subplans map[string]bool
	shared   map[string]bool
	slots    []StateSlot
}

func (w *layoutWalk) take(n plan.Node, tables int) {
	w.slots = append(w.slots, StateSlot{Node: n, ID: w.ids[n], Tables: tables})
}

// walk mirrors builder.build: a subplan the dataflow computes already
// (buildShared) takes nothing.
func (w *layoutWalk) walk(n plan.Node) error {
	if _, ok := n.(*plan.Scan); !ok {
		if key := subplanKey(w.desc.Dataflow, n); key != "" {
			if w.subplans[key] {
				return nil
			}
			if w.subplans == nil {
				w.subplans = map[string]bool{}
			}
			w.subplans[key] = true
		}
	}
	return w.operator(n)
}

// operator mirrors builder.buildOperator.
func (w *layoutWalk) operator(n plan.Node) error {
	dataflow := w.desc.Dataflow
	switch x := n.(type) {
	case *plan.Scan:
		return w.scan(x)
	case *plan.Values:
		w.take(n, 1)
		return nil
	case *plan.Join:
		w.take(n, 1)
	case *plan.Sort, *plan.Limit, *plan.TopN:
		t := plan.StreamingTopN(n)
		if t == nil {
			return w.walk(n.Children()[0])
		}
		if err := plan.CheckStreamableTopN(t); err != nil {
			return err
		}
		w.take(n, 1)
		return w.walk(t.Input)
	case *plan.Aggregate:
		tables := 1
		if aggExtremaTable(dataflow, x) {
			tables++
		}
		w.take(n, tables)
	case *plan.Filter, *plan.Project, *plan.Window, *plan.Union:
	default:
		return sqlerr.New(sqlerr.FeatureNotSupported, "%s is not supported in a materialized view yet", n.Describe())
	}
	for _, c := range n.Children() {
		if err := w.walk(c); err != nil {
			return err
		}
	}
	return nil
}

// scan mirrors the scan branches of builder.buildOperator and
// addStreamScan: a stream's reader shared with an earlier scan takes
// nothing, a reader with a WATERMARK takes its watermark's table, and a
// view the dataflow computes itself takes what its operators take.
func (w *layoutWalk) scan(s *plan.Scan) error {
	dataflow := w.desc.Dataflow
	if s.Object == nil {
		return fmt.Errorf("materialized view %s: a scan of its plan names no object", w.desc.Name)
	}
	switch s.Object.Kind {
	case catalog.KindStream:
		if key := sharedScanKey(dataflow, s); key != "" {
			if w.shared[key] {
				return nil
			}
			if w.shared == nil {
				w.shared = map[string]bool{}
			}
			w.shared[key] = true
		}
		if s.Watermark != nil {
			w.take(s, 1)
		}
		return nil
	case catalog.KindView:
		if !ExpandsView(w.desc, s) {
			return nil // read through an edge
		}
		inner, ok := w.ups[s]
		if !ok {
			return fmt.Errorf("materialized view %s: the plan of view %s it reads was not given", w.desc.Name, s.Object.Name)
		}
		inner = streamingPlan(dataflow, inner)
		for n, id := range stateIDs(w.ids[s], inner) {
			w.ids[n] = id
		}
		return w.walk(inner)
	}
	return nil
}

// aggExtremaTable reports whether aggregate a of a view of format
// dataflow keeps the values of its min and max calls in a second state
// table (extremaTable).
func aggExtremaTable(dataflow catalog.FormatVersion, a *plan.Aggregate) bool {
	ao := appendOnly(a.Input)
	return dataflow >= catalog.DataflowExtremaByValue &&
		slices.ContainsFunc(a.Aggs, func(c plan.AggCall) bool { return storedExtremeCall(c, 0, ao) })
}

// RecordStateLayout completes the state layout view d records
// (OpState, NextOp) for its dataflow built from root (ups as for
// StartView): each operator StateSlots lists whose id lacks tables takes
// the next unused index, from NextOp (or the first operator index) up,
// in build order. For a new view that is every operator, numbered as the
// builder once numbered tables by position; for a view created before
// layouts were recorded it is the numbering its state already has, and
// for a view altered before, the tables its builder took from NextOp for
// operators the ALTER did not list. It reports whether d changed; a
// second call changes nothing.
func RecordStateLayout(d *catalog.Descriptor, root plan.Node, ups UpstreamPlans) (bool, error) {
	slots, err := StateSlots(d, root, ups)
	if err != nil {
		return false, err
	}
	return recordSlots(d, slots), nil
}

// recordSlots is RecordStateLayout of the operators slots lists (the
// view's StateSlots).
func recordSlots(d *catalog.Descriptor, slots []StateSlot) bool {
	pins := map[string][]uint16{}
	for id, list := range d.OpState {
		pins[id] = list
	}
	next := max(d.NextOp, firstOperatorIndex)
	out := map[string][]uint16{}
	for _, s := range slots {
		for range s.Tables {
			idx := next
			if list := pins[s.ID]; len(list) > 0 {
				idx, pins[s.ID] = list[0], list[1:]
			} else {
				next++
			}
			out[s.ID] = append(out[s.ID], idx)
		}
	}
	changed := next != d.NextOp || len(out) != len(d.OpState)
	for id, list := range out {
		changed = changed || !slices.Equal(list, d.OpState[id])
	}
	if !changed {
		return false
	}
	if len(out) == 0 {
		out = nil
	}
	d.OpState, d.NextOp = out, next
	return true
}

// stateTables gives, by operator id, the state tables the dataflow of
// view desc takes (its recorded OpState), checked against what its
// operators need (slots): an operator without tables enough is refused,
// as the layout of a view that was not recorded or was recorded wrong.
func stateTables(desc *catalog.Descriptor, slots []StateSlot) (map[string][]uint16, error) {
	need := map[string]int{}
	for _, s := range slots {
		need[s.ID] += s.Tables
	}
	tables := map[string][]uint16{}
	for id, n := range need {
		list := desc.OpState[id]
		if len(list) < n {
			return nil, fmt.Errorf("materialized view %s: operator %s has %d state tables recorded, and needs %d", desc.Name, id, len(list), n)
		}
		tables[id] = append([]uint16(nil), list[:n]...)
	}
	return tables, nil
}

// sameSlots reports whether the builder built the stateful operators the
// layout lists (drift between StateSlots and the builder is a bug).
func sameSlots(built []OpSlot, want []StateSlot) bool {
	if len(built) != len(want) {
		return false
	}
	for i, s := range built {
		if s.ID != want[i].ID || len(s.Indexes) != want[i].Tables {
			return false
		}
	}
	return true
}
