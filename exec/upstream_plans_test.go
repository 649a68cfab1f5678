package exec

import (
	"fmt"
	"testing"

	"streamdb/catalog"
	"streamdb/plan"
	"streamdb/types"
)

// TestSourceStreamsOfUpstreamPlans checks that a view of a format before
// view edges reads the streams under the views it scans, from the plans
// it is given for each scan, and that a view with edges reads a view it
// scans through its changes (no stream of its own).
func TestSourceStreamsOfUpstreamPlans(t *testing.T) {
	cols := []types.Column{{Name: "k", Type: types.Int8}}
	bids := &catalog.Descriptor{ID: 7, Name: "bids", Kind: catalog.KindStream}
	asks := &catalog.Descriptor{ID: 8, Name: "asks", Kind: catalog.KindStream}
	inner := &catalog.Descriptor{ID: 9, Name: "inner", Kind: catalog.KindView}
	scan := func(d *catalog.Descriptor) *plan.Scan { return &plan.Scan{Object: d, Cols: cols} }
	union := func(inputs ...plan.Node) plan.Node { return &plan.Union{Inputs: inputs, Cols: cols} }
	first, second := scan(inner), scan(inner)
	root := union(scan(asks), first, second)
	ups := UpstreamPlans{first: union(scan(bids), scan(asks)), second: scan(bids)}
	for _, tc := range []struct {
		dataflow catalog.FormatVersion
		want     string
	}{
		{catalog.DataflowMinSupported, "[asks bids]"},
		{catalog.DataflowViewEdges, "[asks]"},
	} {
		d := &catalog.Descriptor{ID: 10, Kind: catalog.KindView, Dataflow: tc.dataflow}
		if got := SourceStreams(d, root, ups); fmt.Sprint(got) != tc.want {
			t.Errorf("dataflow %d: sources %v, want %s", tc.dataflow, got, tc.want)
		}
		for _, s := range []*plan.Scan{first, second} {
			if want := tc.dataflow < catalog.DataflowViewEdges; ExpandsView(d, s) != want {
				t.Errorf("dataflow %d: ExpandsView = %v, want %v", tc.dataflow, !want, want)
			}
		}
	}
}
