package exec

import (
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"
)

// mergeRig is a reader group with a shared reader feeding input old and a
// private reader feeding input moving (of another pipeline), both at
// position 0 of an empty subject. Their reader goroutines do not run: the
// test runs each reader's rounds itself, in the order it wants.
type mergeRig struct {
	rt           *Runtime
	shared, priv *subjectReader
	old, moving  *sourceReader
	oldIn, movIn chan pipelineMsg
	order        feedOrder
	admitted     []pipelineMsg
}

func newMergeRig(t *testing.T) *mergeRig {
	t.Helper()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	rt := NewRuntime(memoryStore(t), nil, log, time.Hour)
	t.Cleanup(rt.Close)
	x := &mergeRig{rt: rt, oldIn: make(chan pipelineMsg, 64), movIn: make(chan pipelineMsg, 64)}
	input := func(out chan pipelineMsg) *sourceReader {
		return &sourceReader{name: "ev", jsStream: "EV", subject: "ev", rt: rt, log: log,
			out: out, quit: make(chan struct{}), failed: make(chan error, 1)}
	}
	x.old, x.moving = input(x.oldIn), input(x.movIn)
	g := &readerGroup{all: rt.subjectReaders(), key: "ev"}
	x.shared = newSubjectReader(g, x.old)
	x.priv = newSubjectReader(g, x.moving)
	for _, r := range []*subjectReader{x.shared, x.priv} {
		r.chunk = r.newChunk()
		r.subs[0].reader, r.subs[0].first = r, r
	}
	g.shared, g.private = x.shared, []*subjectReader{x.priv}
	return x
}

// round runs one round of r (what its goroutine does on a wake-up), which
// must not block.
func (x *mergeRig) round(t *testing.T, r *subjectReader, what string) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.round()
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: the reader's round is stuck", what)
	}
}

// movingBarriers returns the barriers the moving input's pipeline has
// taken so far, in order, feeding what its readers sent through feedOrder
// as the pipeline does.
func (x *mergeRig) movingBarriers() []uint64 {
	for {
		select {
		case m := <-x.movIn:
			x.admitted = append(x.admitted, x.order.admit(m, func(uint16) *subjectReader { return x.priv })...)
			continue
		default:
		}
		break
	}
	var out []uint64
	for _, m := range x.admitted {
		if m.barrier != 0 {
			out = append(out, m.barrier)
		}
	}
	return out
}

// mergePlanned makes the group plan the merge while the shared reader has
// sent barriers up to 4 and the moving input's view, added after barrier
// 5 was injected, has asked for none: the plan's epoch is 5, one the
// moving input never asks for. The shared reader then sends 5 and carries
// the plan out.
func mergePlanned(t *testing.T, x *mergeRig) {
	t.Helper()
	for e := uint64(1); e <= 4; e++ {
		x.old.forward(barrierRequest{epoch: e})
	}
	x.round(t, x.shared, "shared reader sends barriers 1..4 and plans the merge")
	p := x.priv.plan
	if p == nil || p.epoch != 5 || p.into != x.shared {
		t.Fatalf("merge plan: %+v, want one into the shared reader at epoch 5", p)
	}
	x.old.forward(barrierRequest{epoch: 5})
	x.round(t, x.shared, "shared reader sends barrier 5 and takes the moving input")
	if !p.intoDone.Load() {
		t.Fatal("the shared reader did not carry the plan out at barrier 5")
	}
}

// TestMergePrivateReaderHandsOverWhenSharedSendsItsBarrier: after the
// shared reader carried a merge out, it sends the moving input's next
// barrier (6) before the private reader looks at it. The private reader
// must still hand the input over; it used to hand over only when sending
// a barrier itself, so the pipeline held the shared reader's barrier 6
// behind a handoff that never came (a FLUSH that never returned).
func TestMergePrivateReaderHandsOverWhenSharedSendsItsBarrier(t *testing.T) {
	x := newMergeRig(t)
	mergePlanned(t, x)
	x.moving.forward(barrierRequest{epoch: 6})
	x.old.forward(barrierRequest{epoch: 6})
	x.round(t, x.shared, "shared reader sends barrier 6")
	x.round(t, x.priv, "private reader's round after barrier 6 was requested")
	if got := x.movingBarriers(); len(got) != 1 || got[0] != 6 {
		t.Fatalf("the moving input's pipeline took barriers %v, want [6]", got)
	}
	x.moving.forward(barrierRequest{epoch: 7})
	x.old.forward(barrierRequest{epoch: 7})
	x.round(t, x.shared, "shared reader sends barrier 7")
	if got := x.movingBarriers(); len(got) != 2 || got[1] != 7 {
		t.Fatalf("the moving input's pipeline took barriers %v, want [6 7]", got)
	}
}

// TestMergePrivateReaderNeverWaitsForFenceAtLimit: after the shared reader
// carried a merge out at position 0, the moving input's first barrier
// request (6) follows a commit (a fence at sequence 10). The private
// reader, held at the merge limit 0, used to take that request itself and
// wait to reach sequence 10, which its limit forbids, with the plan past
// giving up: stuck for good. The barrier is the shared reader's to send;
// the private reader hands the input over.
func TestMergePrivateReaderNeverWaitsForFenceAtLimit(t *testing.T) {
	x := newMergeRig(t)
	mergePlanned(t, x)
	x.moving.forward(barrierRequest{epoch: 6, need: 10})
	x.round(t, x.priv, "private reader's round after a fenced barrier was requested")
	if x.moving.reader != x.shared {
		t.Fatal("the private reader did not hand the moving input over")
	}
	x.movingBarriers()
	if n := len(x.admitted); n != 0 {
		t.Fatalf("the moving input's pipeline took %d messages before the shared reader reached the fence", n)
	}
	// The handoff reached the pipeline: what the shared reader sends next
	// is taken at once.
	x.shared.mu.Lock()
	x.shared.cmu.Lock()
	x.shared.pos = 10
	x.shared.cmu.Unlock()
	x.shared.mu.Unlock()
	x.old.forward(barrierRequest{epoch: 6, need: 10})
	x.round(t, x.shared, "shared reader sends barrier 6 past the fence")
	if got := x.movingBarriers(); len(got) != 1 || got[0] != 6 {
		t.Fatalf("the moving input's pipeline took barriers %v, want [6]", got)
	}
}

// TestMergeIntoSharedReaderFeedingNoPipeline: the shared reader's last
// input left (its view was dropped) but it has not stopped yet when a new
// view's private reader is near: it plans a merge and, feeding no
// pipeline, carries it out at once in its next round (settle). Nothing
// else wakes it (its inputs are gone, and the private reader hands over
// only after it), so planning must.
func TestMergeIntoSharedReaderFeedingNoPipeline(t *testing.T) {
	x := newMergeRig(t)
	x.old.leave()
	<-x.shared.kick // the wake-up of the leave, as the reader's loop takes it
	x.round(t, x.shared, "shared reader plans the merge")
	p := x.priv.plan
	if p == nil || p.into != x.shared {
		t.Fatalf("merge plan: %+v, want one into the shared reader", p)
	}
	select {
	case <-x.shared.kick:
	default:
		t.Fatal("the shared reader, feeding no pipeline, is not woken to carry out the merge it planned")
	}
	x.round(t, x.shared, "shared reader carries the merge out")
	if !p.intoDone.Load() {
		t.Fatal("the shared reader did not carry the merge out")
	}
	x.moving.forward(barrierRequest{epoch: p.epoch + 1})
	x.round(t, x.priv, "private reader hands over")
	x.round(t, x.shared, "shared reader sends the moving input's barrier")
	if got := x.movingBarriers(); len(got) != 1 || got[0] != p.epoch+1 {
		t.Fatalf("the moving input's pipeline took barriers %v, want [%d]", got, p.epoch+1)
	}
}

// TestMergeDeliveredStaysNewest: after the shared reader carried a merge
// out, it sends the moving input barrier 6 before the private reader sends
// it barrier 5, the plan's epoch. The input's delivered barrier must stay
// 6: a commit's ceiling set for barrier 6 would otherwise hold every
// message the shared reader takes, and the shared reader, whose next
// barrier waits for that commit's messages, would never send another.
func TestMergeDeliveredStaysNewest(t *testing.T) {
	x := newMergeRig(t)
	for e := uint64(1); e <= 4; e++ {
		x.old.forward(barrierRequest{epoch: e})
	}
	x.round(t, x.shared, "shared reader sends barriers 1..4 and plans the merge")
	p := x.priv.plan
	if p == nil || p.epoch != 5 {
		t.Fatalf("merge plan: %+v, want one at epoch 5", p)
	}
	x.old.forward(barrierRequest{epoch: 5})
	x.round(t, x.shared, "shared reader sends barrier 5 and takes the moving input")
	x.moving.forward(barrierRequest{epoch: 5})
	x.moving.forward(barrierRequest{epoch: 6})
	x.old.forward(barrierRequest{epoch: 6})
	x.round(t, x.shared, "shared reader sends barrier 6")
	x.round(t, x.priv, "private reader sends barrier 5 and hands over")
	if got := x.movingBarriers(); fmt.Sprint(got) != "[5 6]" {
		t.Fatalf("the moving input's pipeline took barriers %v, want [5 6]", got)
	}
	if d := x.moving.delivered.Load(); d != 6 {
		t.Fatalf("the moving input's delivered barrier is %d after barriers 5 and 6 reached it, want 6", d)
	}
	x.moving.addCeiling(ceiling{floor: 0, epoch: 6})
	if !x.moving.mayTake(1) {
		t.Fatal("a ceiling for barrier 6, which reached the input, holds the shared reader's next message")
	}
}
