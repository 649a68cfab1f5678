package exec

import (
	"context"
	"testing"
	"time"
)

// holdRuntime is a runtime with only what the input hold reads: pending
// epochs and the two notifiers.
func holdRuntime() *Runtime {
	return &Runtime{maxInflight: 16, pending: map[uint64]*epochState{},
		pauseChanged: newNotifier(), hold: inputHold{changed: newNotifier()}}
}

// inject records epoch e as injected and in flight, as injectBarrier does.
func inject(rt *Runtime, e uint64) {
	rt.injected = e
	rt.pending[e] = &epochState{}
	rt.setHoldLocked()
}

// takes runs waitToTake in the background and returns a channel that
// receives its answer.
func takes(r *subjectReader) <-chan bool {
	ch := make(chan bool, 1)
	go func() { ch <- r.waitToTake() }()
	return ch
}

func wantTake(t *testing.T, ch <-chan bool, what string) {
	t.Helper()
	select {
	case ok := <-ch:
		if !ok {
			t.Fatalf("%s: waitToTake reported the reader ended", what)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: the reader still waits to take a message", what)
	}
}

// TestInputHeldWhileEpochsLag checks the input hold (input_hold.go): a
// reader takes input freely while each epoch commits before the next is
// injected; once an epoch is injected with an earlier one in flight, it
// takes at most heldEpochMessages per epoch and then waits for its next
// barrier; a barrier that waits at it for a fence lets it take; and the
// hold lifts at an injection with nothing else in flight.
func TestInputHeldWhileEpochsLag(t *testing.T) {
	rt := holdRuntime()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r := &subjectReader{rt: rt, ctx: ctx, unheld: make(chan struct{}, 1)}

	inject(rt, 1)
	r.sinceEmit = 10 * heldEpochMessages
	wantTake(t, takes(r), "one epoch in flight")

	inject(rt, 2) // epoch 1 has not committed
	r.sinceEmit = heldEpochMessages - 1
	wantTake(t, takes(r), "under the allowance")
	r.sinceEmit = heldEpochMessages
	if !r.heldBack() {
		t.Fatal("a reader past its allowance with epochs lagging is not held back")
	}
	waiting := takes(r)

	// Its barrier is sent: a new allowance.
	r.cmu.Lock()
	r.emitted, r.sinceEmit = 2, 0
	r.cmu.Unlock()
	r.unhold()
	wantTake(t, waiting, "after its barrier")

	// A barrier waiting at the reader for a fence lets it take.
	r.sinceEmit = heldEpochMessages
	waiting = takes(r)
	r.waiting.Store(true)
	r.unhold()
	wantTake(t, waiting, "while a barrier waits for a fence")
	r.waiting.Store(false)

	// Epochs 1 and 2 commit; epoch 3 is injected alone: the hold lifts.
	waiting = takes(r)
	delete(rt.pending, 1)
	delete(rt.pending, 2)
	inject(rt, 3)
	wantTake(t, waiting, "after the epochs in flight committed")
	if r.heldBack() {
		t.Fatal("held back with one epoch in flight")
	}
}
