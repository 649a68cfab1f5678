package exec

import (
	"io"
	"log/slog"
	"testing"
	"time"
)

// TestCeilingLetsBackfillReachAnOldFence: a view created while a commit's
// fence (message 3) stood is asked for its first barrier with need 3; the
// fence's epoch then commits without it (it joined later), so the runtime
// forgets the fence while the view's reader, backfilling from the start,
// is still below it. A commit published now sets a ceiling on the view's
// input: it must still let messages 1..3 through, or the barrier waits for
// message 3 and message 3 waits for the barrier (a CREATE or FLUSH that
// never returns). The commit's own messages (4 on) wait for the barrier.
func TestCeilingLetsBackfillReachAnOldFence(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	rt := NewRuntime(memoryStore(t), nil, log, time.Hour) // barriers only when the test injects them
	t.Cleanup(rt.Close)
	s := &sourceReader{name: "ev", jsStream: "EV", subject: "ev", rt: rt, log: log,
		barriers: make(chan barrierRequest, 64)}
	p := &pipeline{id: 1, name: "v", launched: true, sources: []*sourceReader{s}, rt: rt, log: log}
	rt.mu.Lock()
	rt.pipelines[p.id] = p
	rt.fences["ev"] = &fence{seq: 3}
	rt.mu.Unlock()

	rt.injectBarrier()
	if q := <-s.barriers; q.need != 3 {
		t.Fatalf("first barrier request %+v, want need 3", q)
	}
	rt.mu.Lock()
	delete(rt.fences, "ev") // its epoch committed, as tryCommitLocked does
	rt.mu.Unlock()

	err := rt.PublishFenced([]string{"ev"}, func() (map[string]uint64, error) {
		return map[string]uint64{"ev": 6}, nil // the commit: messages 4..6
	})
	if err != nil {
		t.Fatal(err)
	}
	for seq := uint64(1); seq <= 3; seq++ {
		if !s.mayTake(seq) {
			t.Fatalf("message %d, at or below the need of a barrier asked before the commit, is held", seq)
		}
	}
	if s.mayTake(4) {
		t.Fatal("the commit's first message passes before the barrier asked before it")
	}
	s.barrierDelivered(1)
	if !s.mayTake(4) {
		t.Fatal("the commit's first message is still held after the barrier")
	}
}
