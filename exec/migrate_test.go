package exec

import (
	"testing"

	"streamdb/catalog"
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
