package exec

import (
	"testing"

	"streamdb/catalog"
	"streamdb/expr"
	"streamdb/plan"
	"streamdb/types"
)

// TestFormatStepsConsecutive: the format steps run from the first one to
// the newest format, one each: a new format needs a step that says which
// views it changes.
func TestFormatStepsConsecutive(t *testing.T) {
	if len(formatSteps) == 0 {
		t.Fatal("no format steps")
	}
	for i, s := range formatSteps {
		if want := formatSteps[0].from + catalog.FormatVersion(i); s.from != want {
			t.Fatalf("step %d is from format %d, want %d", i, s.from, want)
		}
	}
	if last := formatSteps[len(formatSteps)-1].from; last != catalog.DataflowLatest-1 {
		t.Fatalf("the last step is from format %d, want %d (a step to catalog.DataflowLatest)", last, catalog.DataflowLatest-1)
	}
}

// TestMigratedFormatViewOverView: a view of a format before
// DataflowViewEdges that scans a view computes that view's operators in
// its own dataflow, which its plan does not show: it takes no step that
// might change them (it moved to DataflowJoinStateByKey when its plan
// held no aggregate or join).
func TestMigratedFormatViewOverView(t *testing.T) {
	cols := []types.Column{{Name: "n", Type: types.Int8}}
	root := &plan.Scan{Object: &catalog.Descriptor{Name: "v", Kind: catalog.KindView, Columns: []catalog.Column{{Name: "n", Type: "bigint"}}}, Cols: cols}
	for _, from := range []catalog.FormatVersion{catalog.DataflowJoinStatePaged, catalog.DataflowSumSpecials} {
		if got := MigratedFormat(from, root); got != from {
			t.Errorf("a view over a view of format %d moves to %d, want %d", from, got, from)
		}
	}
}

// TestEarlyFormatSteps: the steps before DataflowJoinStatePaged move a view
// only past what it does not hold: two scans of one stream without a
// WATERMARK (a reader each before DataflowSharedScans), one subplan
// computed twice (before DataflowSharedSubplans), an inner join of
// append-only inputs (append-only from DataflowAppendOnlyJoins), any join
// (whose state each later step to DataflowJoinStatePaged re-encodes), in
// its plan or in the plan of a view it computes itself.
func TestEarlyFormatSteps(t *testing.T) {
	cols := []types.Column{{Name: "k", Type: types.Int4}}
	stream := func(id uint32, name string) *plan.Scan {
		return &plan.Scan{Object: &catalog.Descriptor{ID: id, Name: name, Kind: catalog.KindStream,
			Columns: []catalog.Column{{Name: "k", Type: "integer"}}}, Cols: cols}
	}
	count := func(in plan.Node) plan.Node {
		return &plan.Aggregate{Input: in, Aggs: []plan.AggCall{{Func: "count", T: types.Int8}},
			Cols: []types.Column{{Name: "n", Type: types.Int8}}}
	}
	twice := func(in func() plan.Node) plan.Node {
		return &plan.Union{Inputs: []plan.Node{in(), in()}, Cols: in().Schema()}
	}
	join := &plan.Join{Kind: plan.InnerJoin, Left: stream(1, "a"), Right: stream(2, "b"),
		LeftKeys:  []expr.Expr{&expr.ColRef{Idx: 0, T: types.Int4}},
		RightKeys: []expr.Expr{&expr.ColRef{Idx: 0, T: types.Int4}},
		Cols:      append(append([]types.Column(nil), cols...), cols...)}
	withTable := &plan.Join{Kind: plan.InnerJoin, Left: stream(1, "a"), Right: &plan.Scan{Object: &catalog.Descriptor{ID: 4, Name: "t",
		Kind: catalog.KindTable, Columns: []catalog.Column{{Name: "k", Type: "integer"}}}, Cols: cols},
		LeftKeys: join.LeftKeys, RightKeys: join.RightKeys, Cols: join.Cols}
	overJoin := &plan.Scan{Object: &catalog.Descriptor{ID: 3, Name: "v", Kind: catalog.KindView,
		Columns: []catalog.Column{{Name: "k", Type: "integer"}, {Name: "k", Type: "integer"}}}, Cols: join.Cols}
	for _, c := range []struct {
		name string
		from catalog.FormatVersion
		root plan.Node
		ups  UpstreamPlans
		want catalog.FormatVersion
	}{
		{name: "one scan", from: catalog.DataflowOneReaderPerScan, root: stream(1, "a"), want: catalog.DataflowLatest},
		{name: "two scans of a stream", from: catalog.DataflowOneReaderPerScan,
			root: twice(func() plan.Node { return stream(1, "a") }), want: catalog.DataflowOneReaderPerScan},
		{name: "scans of two streams", from: catalog.DataflowOneReaderPerScan,
			root: &plan.Union{Inputs: []plan.Node{stream(1, "a"), stream(2, "b")}, Cols: cols}, want: catalog.DataflowLatest},
		{name: "one aggregate twice", from: catalog.DataflowSharedScans,
			root: twice(func() plan.Node { return count(stream(1, "a")) }), want: catalog.DataflowSharedScans},
		{name: "a join of streams", from: catalog.DataflowOneReaderPerScan, root: join, want: catalog.DataflowSharedSubplans},
		{name: "a join with a table", from: catalog.DataflowOneReaderPerScan, root: withTable, want: catalog.DataflowAppendOnlyJoins},
		{name: "a join a step later", from: catalog.DataflowNarrowRows, root: join, want: catalog.DataflowNarrowRows},
		{name: "a view over a join", from: catalog.DataflowOneReaderPerScan, root: overJoin,
			ups: UpstreamPlans{overJoin: join}, want: catalog.DataflowSharedSubplans},
		{name: "a view over a view not given", from: catalog.DataflowOneReaderPerScan, root: overJoin,
			want: catalog.DataflowOneReaderPerScan},
	} {
		got, err := migrate(nil, &catalog.Descriptor{Name: "w", Dataflow: c.from}, c.root, c.ups)
		if err != nil || got != c.want {
			t.Errorf("%s: a view of format %d moves to %d (%v), want %d", c.name, c.from, got, err, c.want)
		}
	}
}
