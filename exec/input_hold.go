package exec

import "sync/atomic"

// Input is held back while epochs do not commit as fast as barriers are
// injected: while an injected barrier found an earlier epoch still in
// flight, each source reader takes at most heldEpochMessages messages per
// epoch (between two barriers it sends) and then waits for its next
// barrier. Without the hold an epoch took whatever its readers read until
// the next barrier, and barriers wait for commits (injection takes rt.mu,
// and stops at maxInflight epochs in flight): behind a slow view or a slow
// commit, a fast upstream view put most of its backlog into a few epochs.
// An epoch's write batches, dirty aggregate groups and uncommitted cache
// entries stay in memory until it commits, past every cache bound and
// state.memory.budget, so memory grew with the backlog. Held back, an
// epoch holds at most heldEpochMessages per reader, input waits in
// JetStream, and views catch up at the pace of their commits.
//
// The hold is decided at each injection, not at commits: lifted at a
// commit, readers would take input freely while the next commits ran,
// which under load is most of the time. A reader whose barrier waits for
// a fence (Runtime.PublishFenced) takes input regardless, up to the fence,
// so that the barrier gets through and the epochs in flight can commit.
type inputHold struct {
	on      atomic.Bool
	changed *notifier // notified when on flips
}

// heldEpochMessages is what a reader may take per epoch while input is
// held back: enough that epochs still carry work when commits are the
// bottleneck (at the default 20 ms barrier interval, 400k messages a
// second per reader), few enough that maxInflight epochs of it are a small
// part of a memory budget.
const heldEpochMessages = 8 * chunkRows

// setHoldLocked holds input back when an epoch injected finds an earlier
// one still in flight, and lets it go otherwise; it is called when a
// barrier is injected and when pending epochs are dropped. Holding rt.mu.
func (rt *Runtime) setHoldLocked() {
	on := len(rt.pending) > 1
	if rt.hold.on.Swap(on) != on {
		rt.hold.changed.notify()
	}
}

// heldBack reports whether the reader must wait before it takes another
// message; unheld is then signalled when that may have changed for it
// alone (a barrier sent, a fence waited for).
func (r *subjectReader) heldBack() bool {
	if !r.rt.hold.on.Load() || r.waiting.Load() {
		return false
	}
	r.cmu.Lock()
	defer r.cmu.Unlock()
	return r.sinceEmit >= heldEpochMessages
}

// unhold wakes the reader's callback if it waits in heldBack.
func (r *subjectReader) unhold() {
	select {
	case r.unheld <- struct{}{}:
	default:
	}
}
