package exec

import (
	"fmt"
	"log/slog"
	"testing"
	"time"

	"streamdb/catalog"
	"streamdb/expr"
	"streamdb/metrics"
	"streamdb/plan"
	"streamdb/types"
)

// builtSlots builds, without starting it, the dataflow StartView builds
// for view d (streaming plan root) and returns the state tables its builder
// numbered.
func builtSlots(t *testing.T, rt *Runtime, d *catalog.Descriptor, root plan.Node, ups UpstreamPlans) []OpSlot {
	t.Helper()
	p := &pipeline{id: d.ID, name: d.Name, in: make(chan pipelineMsg, 64), rt: rt, log: rt.log,
		rowsIn: metrics.ViewRowsIn.WithLabelValues(d.Name)}
	rec := *d // the builder takes its tables from a recorded layout
	if _, err := RecordStateLayout(&rec, root, ups); err != nil {
		t.Fatalf("%s at format %d: layout: %v", d.Name, d.Dataflow, err)
	}
	slots, err := StateSlots(&rec, root, ups)
	if err != nil {
		t.Fatalf("%s at format %d: slots: %v", d.Name, d.Dataflow, err)
	}
	b := &builder{rt: rt, p: p, need: neededColumns{}, dataflow: d.Dataflow, upstreams: ups}
	b.stateIDs = stateIDs("", root)
	if b.tables, err = stateTables(&rec, slots); err != nil {
		t.Fatalf("%s at format %d: tables: %v", d.Name, d.Dataflow, err)
	}
	b.need.mark(root, plan.AllColumns(len(root.Schema())))
	if _, err := b.build(root, discard{}); err != nil {
		t.Fatalf("%s at format %d: build: %v", d.Name, d.Dataflow, err)
	}
	return b.slots
}

// slotsText names each slot's node, with its tables.
func slotsText(slots []OpSlot) string {
	s := ""
	for _, sl := range slots {
		s += fmt.Sprintf("%s%v; ", sl.Node.Describe(), sl.Indexes)
	}
	return s
}

// TestPlanTables: the state tables planTables finds without building a
// dataflow are those the builder numbers, node for node, in every format
// from DataflowOneReaderPerScan on: aggregates (with an extrema table from
// DataflowExtremaByValue), joins, top-Ns, VALUES, watermark operators (one
// per shared reader), a subplan computed once, one node built twice under
// one operator id before subplans are shared, and the operators of a view
// a view computes itself before DataflowViewEdges.
func TestPlanTables(t *testing.T) {
	rt := NewRuntime(memoryStore(t), nil, slog.New(slog.DiscardHandler), time.Hour)
	t.Cleanup(rt.Close)
	cols := []types.Column{{Name: "k", Type: types.Int4}, {Name: "ts", Type: types.Timestamp}}
	k := &expr.ColRef{Idx: 0, Name: "k", T: types.Int4}
	stream := func(id uint32, watermark bool) *plan.Scan {
		s := &plan.Scan{Object: &catalog.Descriptor{ID: id, Name: fmt.Sprintf("s%d", id), Kind: catalog.KindStream,
			Columns: []catalog.Column{{Name: "k", Type: "integer"}, {Name: "ts", Type: "timestamp"}}}, Cols: cols}
		if watermark {
			s.Watermark = &plan.Watermark{Col: 1, Expr: &expr.ColRef{Idx: 1, Name: "ts", T: types.Timestamp}, Text: "ts AS ts"}
		}
		return s
	}
	table := &plan.Scan{Object: &catalog.Descriptor{ID: 9, Name: "t", Kind: catalog.KindTable,
		Columns: []catalog.Column{{Name: "k", Type: "integer"}, {Name: "ts", Type: "timestamp"}}}, Cols: cols}
	agg := func(in plan.Node, fn string) *plan.Aggregate {
		return &plan.Aggregate{Input: in, GroupBy: []expr.Expr{k},
			Aggs: []plan.AggCall{{Func: "count", T: types.Int8}, {Func: fn, Arg: k, T: types.Int4}},
			Cols: []types.Column{cols[0], {Name: "n", Type: types.Int8}, {Name: "x", Type: types.Int4}}}
	}
	join := func(l, r plan.Node) *plan.Join {
		return &plan.Join{Kind: plan.LeftJoin, Left: l, Right: r, LeftKeys: []expr.Expr{k}, RightKeys: []expr.Expr{k},
			Cols: append(append([]types.Column(nil), l.Schema()...), r.Schema()...)}
	}
	union := func(in ...plan.Node) *plan.Union { return &plan.Union{Inputs: in, Cols: in[0].Schema()} }
	values := &plan.Values{Cols: cols[:1], Rows: [][]expr.Expr{{&expr.Const{D: types.NewInt(1), T: types.Int4}}}}
	topN := &plan.TopN{Input: stream(1, false), Order: []plan.SortKey{{Expr: k}}, Count: 3, Cols: cols}
	shared := agg(stream(1, true), "max") // one node, one operator id

	// A view over a view that retracts: a sum over the counts of another
	// view's aggregate of a join.
	innerPlan := agg(join(stream(1, true), table), "max")
	inner := &plan.Scan{Object: &catalog.Descriptor{ID: 5, Name: "inner", Kind: catalog.KindView,
		Columns: []catalog.Column{{Name: "k", Type: "integer"}, {Name: "n", Type: "bigint"}, {Name: "x", Type: "integer"}}},
		Cols: innerPlan.Cols}
	overView := &plan.Aggregate{Input: inner,
		Aggs: []plan.AggCall{{Func: "sum", Arg: &expr.ColRef{Idx: 1, Name: "n", T: types.Int8}, T: types.Numeric}},
		Cols: []types.Column{{Name: "s", Type: types.Numeric}}}
	for _, c := range []struct {
		name string
		root plan.Node
		ups  UpstreamPlans
	}{
		{name: "aggregate over a join", root: agg(join(stream(1, false), table), "min")},
		{name: "min over a join that retracts", root: agg(join(table, stream(2, false)), "min")},
		{name: "min over an aggregate", root: agg(agg(stream(2, false), "max"), "min")},
		{name: "two aggregates of a union", root: union(agg(stream(1, false), "max"), agg(stream(2, true), "max"))},
		{name: "one subplan twice", root: union(agg(stream(1, false), "max"), agg(stream(1, false), "max"))},
		{name: "one node twice", root: union(shared, shared)},
		{name: "watermark scans of one stream", root: union(stream(1, true), stream(1, true))},
		{name: "values and a top-N", root: union(values, &plan.Project{Input: topN, Exprs: []expr.Expr{k}, Cols: cols[:1]})},
		{name: "a view over a view", root: overView, ups: UpstreamPlans{inner: innerPlan}},
	} {
		edges := anyNode(c.root, func(n plan.Node) bool {
			s, ok := n.(*plan.Scan)
			return ok && s.Object.Kind != catalog.KindStream
		})
		for f := catalog.DataflowOneReaderPerScan; f <= catalog.DataflowLatest; f++ {
			if edges && f >= catalog.DataflowViewEdges {
				break // the builder reads tables and views from their running pipelines
			}
			d := &catalog.Descriptor{ID: 7, Name: "v", Kind: catalog.KindView, Dataflow: f}
			root := streamingPlan(f, c.root)
			got, ok := planTables(d, root, c.ups)
			if !ok {
				t.Errorf("%s at format %d: planTables does not tell", c.name, f)
				continue
			}
			if g, w := slotsText(got), slotsText(builtSlots(t, rt, d, root, c.ups)); g != w {
				t.Errorf("%s at format %d: planTables %s\nthe builder %s", c.name, f, g, w)
			}
		}
	}

	// What it cannot tell.
	for _, c := range []struct {
		name string
		d    *catalog.Descriptor
		ups  UpstreamPlans
	}{
		{name: "an altered view", d: &catalog.Descriptor{Dataflow: catalog.DataflowSumSpecials, OpState: map[string][]uint16{"x": {2}}},
			ups: UpstreamPlans{inner: innerPlan}},
		{name: "a view over a view not given", d: &catalog.Descriptor{Dataflow: catalog.DataflowSumSpecials}},
	} {
		if slots, ok := planTables(c.d, streamingPlan(c.d.Dataflow, overView), c.ups); ok {
			t.Errorf("%s: planTables tells %s", c.name, slotsText(slots))
		}
	}
}
