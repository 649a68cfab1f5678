package exec

import (
	"fmt"
	"testing"

	"streamdb/expr"
	"streamdb/plan"
	"streamdb/storage"
	"streamdb/types"
)

// TestSharedScanSources checks which scans share a reader: scans of one
// stream under the shared layout do, a scan with a WATERMARK and every
// scan under the old layout do not, and scans of different streams never.
func TestSharedScanSources(t *testing.T) {
	cols := []types.Column{{Name: "k", Type: types.Int8}, {Name: "ts", Type: types.Timestamp}}
	bids := &storage.Descriptor{ID: 7, Name: "bids", Kind: storage.KindStream}
	asks := &storage.Descriptor{ID: 8, Name: "asks", Kind: storage.KindStream}
	scan := func(d *storage.Descriptor) *plan.Scan { return &plan.Scan{Object: d, Cols: cols} }
	withWatermark := scan(bids)
	withWatermark.Watermark = &plan.Watermark{Col: 1, Expr: &expr.ColRef{Idx: 1, T: types.Timestamp}, Text: "ts"}
	union := func(inputs ...plan.Node) plan.Node { return &plan.Union{Inputs: inputs, Cols: cols} }
	root := union(scan(bids), scan(asks), scan(bids), withWatermark, scan(asks))

	rt := &Runtime{}
	for _, tc := range []struct {
		dataflow int
		want     string
	}{
		{storage.DataflowOneReaderPerScan, "[bids asks bids bids asks]"},
		{storage.DataflowSharedScans, "[bids asks bids]"},
	} {
		got, err := rt.SourceStreams(&storage.Descriptor{Dataflow: tc.dataflow}, root)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got) != tc.want {
			t.Errorf("dataflow %d: sources %v, want %s", tc.dataflow, got, tc.want)
		}
	}
}
