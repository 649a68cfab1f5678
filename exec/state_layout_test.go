package exec

import (
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"streamdb/catalog"
	"streamdb/expr"
	"streamdb/plan"
	"streamdb/types"
)

// layoutPlans builds the plan shapes whose state layout the tests check,
// over streams bids and asks (columns k int8, ts timestamp).
type layoutPlans struct {
	cols       []types.Column
	bids, asks *catalog.Descriptor
}

func newLayoutPlans() *layoutPlans {
	cols := []types.Column{{Name: "k", Type: types.Int8}, {Name: "ts", Type: types.Timestamp}}
	stream := func(id uint32, name string) *catalog.Descriptor {
		return &catalog.Descriptor{ID: id, Name: name, Kind: catalog.KindStream, Subject: name, JSStream: name,
			Columns: catalog.ColumnsFrom(cols)}
	}
	return &layoutPlans{cols: cols, bids: stream(1, "bids"), asks: stream(2, "asks")}
}

func (lp *layoutPlans) scan(d *catalog.Descriptor) *plan.Scan {
	return &plan.Scan{Object: d, Cols: lp.cols}
}

func (lp *layoutPlans) watermarked(d *catalog.Descriptor) *plan.Scan {
	s := lp.scan(d)
	s.Watermark = &plan.Watermark{Col: 1, Expr: &expr.ColRef{Idx: 1, T: types.Timestamp}, Text: "ts"}
	return s
}

func col(i int, t types.Type) *expr.ColRef { return &expr.ColRef{Idx: i, T: t} }

// agg groups in by its column 0 and computes the calls named (count, min
// or max of column 0).
func (lp *layoutPlans) agg(in plan.Node, funcs ...string) *plan.Aggregate {
	a := &plan.Aggregate{Input: in, GroupBy: []expr.Expr{col(0, types.Int8)},
		Cols: []types.Column{{Name: "k", Type: types.Int8}}}
	for _, f := range funcs {
		c := plan.AggCall{Func: f, T: types.Int8}
		if f != "count" {
			c.Arg = col(0, types.Int8)
		}
		a.Aggs = append(a.Aggs, c)
		a.Cols = append(a.Cols, types.Column{Name: f, Type: types.Int8})
	}
	return a
}

func (lp *layoutPlans) join(kind plan.JoinKind, l, r plan.Node) *plan.Join {
	return &plan.Join{Kind: kind, Left: l, Right: r,
		LeftKeys: []expr.Expr{col(0, types.Int8)}, RightKeys: []expr.Expr{col(0, types.Int8)},
		Cols: append(append([]types.Column(nil), l.Schema()...), r.Schema()...)}
}

func (lp *layoutPlans) topN(in plan.Node, n int64) *plan.TopN {
	return &plan.TopN{Input: in, Order: []plan.SortKey{{Expr: col(0, types.Int8), Desc: true}}, Count: n,
		Cols: in.Schema()}
}

// layoutCase is a view whose state layout is checked: its plan, format,
// the plans of the views its dataflow computes itself, and its stateful
// operators as built, by kind with their tables, in build order.
type layoutCase struct {
	name     string
	dataflow catalog.FormatVersion
	root     plan.Node
	ups      UpstreamPlans
	want     string
}

func layoutCases() []layoutCase {
	lp := newLayoutPlans()
	latest := catalog.DataflowLatest
	var cases []layoutCase
	add := func(name string, f catalog.FormatVersion, root plan.Node, ups UpstreamPlans, want string) {
		cases = append(cases, layoutCase{name, f, root, ups, want})
	}
	add("stateless", latest, lp.scan(lp.bids), nil, "")
	add("join", latest, lp.join(plan.InnerJoin, lp.scan(lp.bids), lp.scan(lp.asks)), nil, "join[2]")
	// min and max over a retracting input (a left join's output) take a
	// second table from DataflowExtremaByValue on.
	minMax := func() plan.Node {
		return lp.agg(lp.join(plan.LeftJoin, lp.scan(lp.bids), lp.scan(lp.asks)), "min", "max", "count")
	}
	add("min max over a left join", latest, minMax(), nil, "aggregate[2 3] join[4]")
	add("min max before extrema tables", catalog.DataflowTopNStateByKey, minMax(), nil, "aggregate[2] join[3]")
	add("top-N over an aggregate", latest, lp.topN(lp.agg(lp.scan(lp.bids), "count"), 3), nil, "topn[2] aggregate[3]")
	limit := &plan.Limit{Input: &plan.Sort{Input: lp.agg(lp.scan(lp.asks), "max"),
		Keys: []plan.SortKey{{Expr: col(1, types.Int8)}}}, Count: 2}
	add("limit over sort", latest, limit, nil, "topn[2] aggregate[3]")
	// Two equal aggregates over one stream are computed once.
	twice := &plan.Union{Inputs: []plan.Node{lp.agg(lp.scan(lp.bids), "count"), lp.agg(lp.scan(lp.bids), "count")},
		Cols: lp.agg(lp.scan(lp.bids), "count").Cols}
	add("shared subplan", latest, twice, nil, "aggregate[2]")
	apart := &plan.Union{Inputs: []plan.Node{lp.agg(lp.scan(lp.bids), "count"), lp.agg(lp.scan(lp.asks), "count")},
		Cols: lp.agg(lp.scan(lp.bids), "count").Cols}
	add("subplans of two streams", latest, apart, nil, "aggregate[2] aggregate[3]")
	// Scans of a stream with a WATERMARK share one reader, and so one
	// watermark, from DataflowSharedWatermarkScans on.
	wms := &plan.Union{Inputs: []plan.Node{lp.watermarked(lp.bids), lp.watermarked(lp.bids), lp.scan(lp.asks)}, Cols: lp.cols}
	add("shared watermark", latest, wms, nil, "scan[2]")
	add("watermarks apart", catalog.DataflowExtremaByValue, wms, nil, "scan[2] scan[3]")
	values := &plan.Values{Cols: lp.cols[:1], Rows: [][]expr.Expr{{&expr.Const{D: types.NewInt(1), T: types.Int8}}}}
	add("values", latest, lp.agg(&plan.Union{Inputs: []plan.Node{values, &plan.Project{Input: lp.scan(lp.bids),
		Exprs: []expr.Expr{col(0, types.Int8)}, Cols: lp.cols[:1]}}, Cols: lp.cols[:1]}, "count"), nil, "aggregate[2] operator[3]")

	// A view of a format before edges computes the views it reads: their
	// operators and state are among its own, named after the scan.
	innerCols := lp.agg(lp.scan(lp.bids), "count").Cols
	inner := &catalog.Descriptor{ID: 50, Name: "per_k", Kind: catalog.KindView, Columns: catalog.ColumnsFrom(innerCols)}
	overView := func() (plan.Node, UpstreamPlans) {
		a, b := &plan.Scan{Object: inner, Cols: innerCols}, &plan.Scan{Object: inner, Cols: innerCols}
		ups := UpstreamPlans{a: lp.agg(lp.scan(lp.bids), "count"), b: lp.topN(lp.agg(lp.scan(lp.bids), "max"), 1)}
		return lp.join(plan.InnerJoin, lp.agg(a, "max"), b), ups
	}
	root, ups := overView()
	add("view over view before edges", catalog.DataflowJoinStateByKey, root, ups, "join[2] aggregate[3] aggregate[4] topn[5] aggregate[6]")
	return cases
}

// TestStateLayoutIsBuilt: for the plan shapes of exec's tests, the
// layout StateSlots computes without building the dataflow is what the
// builder takes, RecordStateLayout numbers a new view's tables in build
// order (the numbering of views from before layouts were recorded), and
// a second RecordStateLayout changes nothing.
func TestStateLayoutIsBuilt(t *testing.T) {
	rt := NewRuntime(memoryStore(t), nil, slog.New(slog.DiscardHandler), time.Hour)
	t.Cleanup(rt.Close)
	for i, c := range layoutCases() {
		t.Run(c.name, func(t *testing.T) {
			d := &catalog.Descriptor{ID: uint32(100 + i), Name: "v", Kind: catalog.KindView, Dataflow: c.dataflow}
			if _, err := RecordStateLayout(d, c.root, c.ups); err != nil {
				t.Fatal(err)
			}
			recorded := maps.Clone(d.OpState)
			if changed, err := RecordStateLayout(d, c.root, c.ups); err != nil || changed {
				t.Fatalf("second RecordStateLayout changed %v (err %v): %v -> %v", changed, err, recorded, d.OpState)
			}
			p, _, err := rt.buildView(d, c.root, c.ups)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, s := range p.layout.Slots {
				got = append(got, fmt.Sprintf("%s%v", nodeKind(s.Node), s.Indexes))
				if !slices.Contains(slices.Collect(maps.Keys(d.OpState)), s.ID) {
					t.Errorf("built operator %s is not in the recorded layout %v", s.ID, d.OpState)
				}
			}
			if g := strings.Join(got, " "); g != c.want {
				t.Errorf("built %q; want %q (recorded %v)", g, c.want, d.OpState)
			}
			slots, err := StateSlots(d, c.root, c.ups)
			if err != nil {
				t.Fatal(err)
			}
			if !sameSlots(p.layout.Slots, slots) {
				t.Errorf("built %v; StateSlots %v", p.layout.Slots, slots)
			}
		})
	}
}

// TestStateLayoutRequired: a view whose layout is not recorded does not
// build (its tables are not guessed from their order), and the layout of
// a view altered before layouts covered every operator is completed as
// its builder numbered it then: the operators the ALTER listed keep their
// tables, the others take tables from NextOp in build order.
func TestStateLayoutRequired(t *testing.T) {
	rt := NewRuntime(memoryStore(t), nil, slog.New(slog.DiscardHandler), time.Hour)
	t.Cleanup(rt.Close)
	lp := newLayoutPlans()
	root := lp.agg(lp.join(plan.LeftJoin, lp.scan(lp.bids), lp.scan(lp.asks)), "min")
	d := &catalog.Descriptor{ID: 7, Name: "v", Kind: catalog.KindView, Dataflow: catalog.DataflowLatest}
	if _, _, err := rt.buildView(d, root, nil); err == nil || !strings.Contains(err.Error(), "state tables recorded") {
		t.Fatalf("a view without a layout built (err %v)", err)
	}

	ids := stateIDs("", streamingPlan(d.Dataflow, root))
	var aggID string
	for n, id := range ids {
		if _, ok := n.(*plan.Aggregate); ok {
			aggID = id
		}
	}
	d.OpState, d.NextOp = map[string][]uint16{aggID: {5}}, 9
	if _, err := RecordStateLayout(d, root, nil); err != nil {
		t.Fatal(err)
	}
	p, _, err := rt.buildView(d, root, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range p.layout.Slots {
		got = append(got, fmt.Sprintf("%s%v", nodeKind(s.Node), s.Indexes))
	}
	if g, want := strings.Join(got, " "), "aggregate[5 9] join[10]"; g != want || d.NextOp != 11 {
		t.Errorf("built %q, next op %d; want %q, 11", g, d.NextOp, want)
	}
}
