package exec

import (
	"slices"
	"testing"
)

// TestJoinAllJoinsEveryEdgeOrNone races joinAll, attaching a view's two
// edges after barrier e, with its two upstreams passing barrier e. When
// joinAll refuses (an upstream passed e first), no edge may be left
// joined: an edge its upstream took in at e while the other was refused
// would carry the changes and barriers after e to a view that attaches
// at a later barrier (with its snapshot of that later epoch), and the
// view would align its barriers on that edge's stale ones. When joinAll
// accepts, both edges receive what follows barrier e.
func TestJoinAllJoinsEveryEdgeOrNone(t *testing.T) {
	const e = 5
	// Enough rounds that the old joinAll, which joined the edges one by
	// one, failed in nearly every run on two cores.
	const attachRaces = 100000
	refused := 0
	for i := range attachRaces {
		up1 := &pipeline{id: 1, name: "t1", hub: &edgeHub{last: e - 1}}
		up2 := &pipeline{id: 2, name: "t2", hub: &edgeHub{last: e - 1}}
		ed1, ed2 := newEdge(up1, 0, nil, 1), newEdge(up2, 1, nil, 1)
		passed := make(chan struct{})
		go func() {
			up2.hub.barrier(e)
			up1.hub.barrier(e)
			close(passed)
		}()
		ok := joinAll([]*edge{ed1, ed2}, e)
		<-passed
		if !ok {
			refused++
		}
		for _, c := range []struct {
			up *pipeline
			ed *edge
		}{{up1, ed1}, {up2, ed2}} {
			h := c.up.hub
			joined := slices.Contains(h.outs, c.ed)
			if joined != ok || len(h.joining) != 0 || h.active.Load() != int32(len(h.outs)) {
				t.Fatalf("iteration %d: joinAll = %v, but the edge from %s is joined %v (after barrier %d; %d edges wait to join, %d active)",
					i, ok, c.up.name, joined, e, len(h.joining), h.active.Load())
			}
		}
	}
	t.Logf("%d of %d attaches refused", refused, attachRaces)
}
