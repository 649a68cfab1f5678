package exec

import (
	"fmt"
	"testing"

	"streamdb/catalog"
	"streamdb/expr"
	"streamdb/plan"
	"streamdb/types"
)

// TestSharedScanSources checks which scans share a reader: scans of one
// stream do, scans with a WATERMARK only with each other and only from
// DataflowSharedWatermarkScans on, and scans of different streams never.
func TestSharedScanSources(t *testing.T) {
	cols := []types.Column{{Name: "k", Type: types.Int8}, {Name: "ts", Type: types.Timestamp}}
	bids := &catalog.Descriptor{ID: 7, Name: "bids", Kind: catalog.KindStream}
	asks := &catalog.Descriptor{ID: 8, Name: "asks", Kind: catalog.KindStream}
	scan := func(d *catalog.Descriptor) *plan.Scan { return &plan.Scan{Object: d, Cols: cols} }
	withWatermark := func() *plan.Scan {
		s := scan(bids)
		s.Watermark = &plan.Watermark{Col: 1, Expr: &expr.ColRef{Idx: 1, T: types.Timestamp}, Text: "ts"}
		return s
	}
	union := func(inputs ...plan.Node) plan.Node { return &plan.Union{Inputs: inputs, Cols: cols} }
	root := union(scan(bids), scan(asks), scan(bids), withWatermark(), scan(asks), withWatermark())

	for _, tc := range []struct {
		dataflow catalog.FormatVersion
		want     string
	}{
		{catalog.DataflowMinSupported, "[bids asks bids bids]"},
		{catalog.DataflowSharedWatermarkScans, "[bids asks bids]"},
	} {
		got := SourceStreams(&catalog.Descriptor{Dataflow: tc.dataflow}, root, nil)
		if fmt.Sprint(got) != tc.want {
			t.Errorf("dataflow %d: sources %v, want %s", tc.dataflow, got, tc.want)
		}
	}
}

// TestSubplanKeys checks what counts as the same subplan: two aggregates
// over the same windows grouping by the same columns in another order are
// one; a different aggregate, window or stream is not; and a parameter
// makes a subplan unshareable.
func TestSubplanKeys(t *testing.T) {
	cols := []types.Column{{Name: "auction", Type: types.Int8}, {Name: "ts", Type: types.Timestamp}}
	bid := &catalog.Descriptor{ID: 3, Name: "bid", Kind: catalog.KindStream}
	other := &catalog.Descriptor{ID: 4, Name: "other", Kind: catalog.KindStream}
	col := func(i int, typ types.Type) *expr.ColRef { return &expr.ColRef{Idx: i, T: typ} }
	hop := func(d *catalog.Descriptor, size int64) *plan.Window {
		return &plan.Window{Input: &plan.Scan{Object: d, Cols: cols}, TimeCol: 1, Size: size, Slide: 2,
			Cols: append(append([]types.Column(nil), cols...), types.Column{Name: "window_start", Type: types.Timestamp}, types.Column{Name: "window_end", Type: types.Timestamp})}
	}
	count := plan.AggCall{Func: "count", T: types.Int8}
	agg := func(in plan.Node, calls []plan.AggCall, groups ...expr.Expr) *plan.Aggregate {
		return &plan.Aggregate{Input: in, GroupBy: groups, Aggs: calls}
	}
	byAuctionWindow := agg(hop(bid, 10), []plan.AggCall{count}, col(0, types.Int8), col(2, types.Timestamp))
	byWindowAuction := agg(hop(bid, 10), []plan.AggCall{count}, col(2, types.Timestamp), col(0, types.Int8))
	key := subplanKey(catalog.DataflowSharedSubplans, byAuctionWindow)
	if key == "" {
		t.Fatal("a windowed count has no key")
	}
	if k := subplanKey(catalog.DataflowSharedSubplans, byWindowAuction); k != key {
		t.Errorf("the same groups in another order differ:\n%s\n%s", key, k)
	}
	if got := fmt.Sprint(outputKeys(byWindowAuction)); got == fmt.Sprint(outputKeys(byAuctionWindow)) {
		t.Errorf("output columns of permuted groups should differ in order: %s", got)
	}
	sum := plan.AggCall{Func: "sum", Arg: col(0, types.Int8), T: types.Numeric}
	for name, n := range map[string]plan.Node{
		"another aggregate": agg(hop(bid, 10), []plan.AggCall{sum}, col(0, types.Int8), col(2, types.Timestamp)),
		"another window":    agg(hop(bid, 12), []plan.AggCall{count}, col(0, types.Int8), col(2, types.Timestamp)),
		"another stream":    agg(hop(other, 10), []plan.AggCall{count}, col(0, types.Int8), col(2, types.Timestamp)),
	} {
		if k := subplanKey(catalog.DataflowSharedSubplans, n); k == key || k == "" {
			t.Errorf("%s: key %q (shared %q)", name, k, key)
		}
	}
	withParam := &plan.Filter{Input: hop(bid, 10), Cond: &expr.Func{Name: "=", Args: []expr.Expr{col(0, types.Int8), &expr.Param{N: 0, T: types.Int8}}, T: types.Bool}}
	if k := subplanKey(catalog.DataflowSharedSubplans, withParam); k != "" {
		t.Errorf("a filter with a parameter has key %q", k)
	}
}

// TestSubplanKeysAboveAggregates: projections that pick the same
// positions of two aggregates whose columns are in different orders
// compute different things, so their keys differ.
func TestSubplanKeysAboveAggregates(t *testing.T) {
	cols := []types.Column{{Name: "region", Type: types.Text}, {Name: "product", Type: types.Text}}
	orders := &catalog.Descriptor{ID: 5, Name: "orders", Kind: catalog.KindStream}
	count := plan.AggCall{Func: "count", T: types.Int8}
	byOrder := func(first, second int) plan.Node {
		a := &plan.Aggregate{Input: &plan.Scan{Object: orders, Cols: cols}, Aggs: []plan.AggCall{count},
			GroupBy: []expr.Expr{&expr.ColRef{Idx: first, T: types.Text}, &expr.ColRef{Idx: second, T: types.Text}}}
		return &plan.Project{Input: a, Exprs: []expr.Expr{&expr.ColRef{Idx: 0, T: types.Text}, &expr.ColRef{Idx: 2, T: types.Int8}}}
	}
	a, b := subplanKey(catalog.DataflowSharedSubplans, byOrder(0, 1)), subplanKey(catalog.DataflowSharedSubplans, byOrder(1, 0))
	if a == "" || a == b {
		t.Errorf("projections over differently ordered aggregates: keys %q and %q", a, b)
	}
}
