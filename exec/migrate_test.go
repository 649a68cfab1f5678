package exec

import (
	"testing"

	"streamdb/catalog"
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
