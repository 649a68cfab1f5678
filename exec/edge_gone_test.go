package exec

import "testing"

// TestHubDropsEndedEdgeAtBarrier: once the reader of an edge has ended
// (its view dropped), the upstream's next barrier drops the edge, even
// though its queue has room and no chunk comes: otherwise a quiet
// upstream would queue every barrier for the ended reader, and keep
// collecting its changes for it, for as long as it runs.
func TestHubDropsEndedEdgeAtBarrier(t *testing.T) {
	up := &pipeline{id: 1, name: "t", hub: &edgeHub{}}
	ed := newEdge(up, 0, nil, 1)
	up.hub.attach(ed)
	up.hub.barrier(1)
	if got := len(ed.take()); got != 1 {
		t.Fatalf("a live edge got %d items for one barrier, want 1", got)
	}
	ed.close()
	up.hub.barrier(2)
	if len(up.hub.outs) != 0 || up.hub.active.Load() != 0 || up.hub.readers() {
		t.Fatalf("after a barrier, the ended edge is still an output (%d outputs, %d active)", len(up.hub.outs), up.hub.active.Load())
	}
	if got := len(ed.q); got != 0 {
		t.Fatalf("the ended edge queued %d items", got)
	}
}
