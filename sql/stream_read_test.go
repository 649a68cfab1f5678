package sql

import (
	"testing"

	"streamdb/catalog"
	"streamdb/plan"
)

// TestStreamScanCaps: a stream scan read only through projections by a
// LIMIT stops at LIMIT + OFFSET rows; behind a filter or a sort it reads
// everything.
func TestStreamScanCaps(t *testing.T) {
	scan := func() *plan.Scan { return &plan.Scan{Object: &catalog.Descriptor{Kind: catalog.KindStream, Name: "s"}} }
	direct, projected, filtered, sorted := scan(), scan(), scan(), scan()
	roots := []plan.Node{
		&plan.Limit{Input: direct, Count: 3, Offset: 2},
		&plan.Limit{Input: &plan.Project{Input: &plan.Project{Input: projected}}, Count: 5},
		&plan.Limit{Input: &plan.Filter{Input: filtered}, Count: 5},
		&plan.Limit{Input: &plan.Sort{Input: sorted}, Count: 5},
	}
	caps := map[*plan.Scan]int64{}
	for _, r := range roots {
		streamScanCaps(r, caps)
	}
	if caps[direct] != 5 || caps[projected] != 5 {
		t.Errorf("capped scans: direct %d (want 5), projected %d (want 5)", caps[direct], caps[projected])
	}
	if _, ok := caps[filtered]; ok {
		t.Error("a scan behind a filter was capped")
	}
	if _, ok := caps[sorted]; ok {
		t.Error("a scan behind a sort was capped")
	}
}
