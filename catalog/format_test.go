package catalog

import (
	"errors"
	"strings"
	"testing"

	"streamdb/sqlerr"
)

// TestFormatNumbers pins the stored number of every format: a format
// inserted before another would renumber the views that use it.
func TestFormatNumbers(t *testing.T) {
	pinned := []struct {
		name string
		v    FormatVersion
		want int
	}{
		{"DataflowOneReaderPerScan", DataflowOneReaderPerScan, 0},
		{"DataflowSharedScans", DataflowSharedScans, 1},
		{"DataflowSharedSubplans", DataflowSharedSubplans, 2},
		{"DataflowAppendOnlyJoins", DataflowAppendOnlyJoins, 3},
		{"DataflowNarrowRows", DataflowNarrowRows, 4},
		{"DataflowJoinStateByID", DataflowJoinStateByID, 5},
		{"DataflowJoinStatePaged", DataflowJoinStatePaged, 6},
		{"DataflowSumSpecials", DataflowSumSpecials, 7},
		{"DataflowJoinStateByKey", DataflowJoinStateByKey, 8},
		{"DataflowViewEdges", DataflowViewEdges, 9},
		{"DataflowTopNStateByKey", DataflowTopNStateByKey, 10},
		{"DataflowExtremaByValue", DataflowExtremaByValue, 11},
		{"DataflowSharedWatermarkScans", DataflowSharedWatermarkScans, 12},
		{"DataflowIntervalSpans", DataflowIntervalSpans, 13},
		{"DataflowVNodeKeys", DataflowVNodeKeys, 14},
		{"DataflowJoinVNodes", DataflowJoinVNodes, 15},
		{"DataflowViewRowVNodes", DataflowViewRowVNodes, 16},
	}
	for _, p := range pinned {
		if int(p.v) != p.want {
			t.Errorf("%s = %d, stored as %d: add new formats at the end", p.name, p.v, p.want)
		}
	}
	if DataflowLatest < pinned[len(pinned)-1].v {
		t.Errorf("DataflowLatest = %d, older than the formats above", DataflowLatest)
	}
}

func TestCheckFormat(t *testing.T) {
	for v := DataflowMinSupported; v <= DataflowLatest; v++ {
		if err := CheckFormat("view v", v); err != nil {
			t.Errorf("format %d: %v", v, err)
		}
	}
	for _, c := range []struct {
		v, minV, maxV FormatVersion
		want          string
	}{
		{DataflowLatest + 1, DataflowMinSupported, DataflowLatest, "newer than this streamdb reads"},
		{2, 3, 7, "older than this streamdb reads"},
	} {
		err := checkFormatIn("view v", c.v, c.minV, c.maxV)
		var se *sqlerr.Error
		if !errors.As(err, &se) || se.Code != sqlerr.FeatureNotSupported || !strings.Contains(se.Message, c.want) || se.Hint == "" {
			t.Errorf("format %d in [%d, %d]: got %v, want 0A000 %q with a hint", c.v, c.minV, c.maxV, err, c.want)
		}
	}
}
