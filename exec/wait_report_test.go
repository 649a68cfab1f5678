package exec

import "testing"

// TestWaitReportNamesTheViewBehind: the report of a wait names the epoch
// in flight and the view it waits for, and where that view's input is:
// its committed position and target, its reader's role, position and
// merge state, and the barrier requests the reader has not sent.
func TestWaitReportNamesTheViewBehind(t *testing.T) {
	x := newMergeRig(t)
	mergePlanned(t, x)
	p := &pipeline{id: 7, name: "v7", sources: []*sourceReader{x.moving}, rt: x.rt}
	x.rt.mu.Lock()
	x.rt.pipelines[p.id] = p
	x.rt.injected = 6
	x.rt.pending[6] = &epochState{waiting: map[uint32]bool{7: true}}
	x.rt.mu.Unlock()
	x.moving.asked.Store(6)
	x.moving.forward(barrierRequest{epoch: 6})
	got := x.rt.WaitReport(nil, map[string]uint64{"ev": 3}).String()
	want := "epoch 6 (committed 0, injected 6) waits for v7; view v7 reads ev: committed 0 of 3, " +
		"private reader (barrier 0 sent, merge limit 0, merge at epoch 5 (shared reader done: true)) at 0, " +
		"barrier 6 asked, 0 delivered, 1 requests pending at the reader (6..6)"
	if got != want {
		t.Errorf("report:\n got %s\nwant %s", got, want)
	}
}
