package exec

import (
	"sync/atomic"
	"time"

	"streamdb/plan"
)

// Watermark alignment. A view that reads several watermarked streams
// frees join and window state only as the slowest of their watermarks
// advances. Readers that catch up on a backlog take turns by message
// count, not by event time, so a stream with few messages per second of
// event time (Nexmark's auctions beside its bids) runs far ahead in event
// time, and everything it read waits in state for the other stream's
// watermark. As in Flink's watermark alignment, a reader whose event time
// is more than scan.watermark.alignment.max-drift ahead of a peer's holds
// its next message until the peer catches up; its barriers still pass.
//
// Peers of a reader are the readers of the other watermarked stream
// inputs of every pipeline it feeds. Event time here is the largest value
// of the stream's watermark column the reader has taken (the watermark
// before its delay), which is enough to bound how far readers drift.
//
// Invariants that keep alignment from deadlocking:
//   - a peer constrains only while it has messages it has not taken
//     (backlog): a caught-up stream holds no one back;
//   - a peer held at a merge limit (shared_source_merge.go) constrains no
//     one, since what it waits for may be a reader it would hold;
//   - a reader with no event time yet is never held, and the reader with
//     the smallest event time among the constraining ones is never held,
//     so some reader always moves;
//   - a reader that must reach a fence (Runtime.PublishFenced) is never
//     held, so that its barrier gets through.
//
// Until a watermarked input of the same pipeline is attached to a
// reader, and until a new reader has learnt whether it has a backlog,
// they count as peers whose event time is unknown: others wait for them,
// which keeps a reader that starts first from running ahead.

// eventClock is a reader's event-time progress, read by its peers.
type eventClock struct {
	// col is the stream's watermark column in decoded rows; -1: the
	// stream has no watermark and the reader is never aligned.
	col  int
	max  atomic.Int64 // microseconds; valid once seen
	seen atomic.Bool
	// backlog: the reader holds or has yet to take messages (true from
	// the start until the consumer says otherwise).
	backlog atomic.Bool
	// atLimit mirrors held: the reader waits at a merge limit.
	atLimit atomic.Bool
	// peers is refreshed by the reader's consumer callback (refreshPeers).
	peers atomic.Pointer[alignmentPeers]
	// sinceRefresh counts messages taken since peers was refreshed
	// (consumer callback only).
	sinceRefresh int
}

// alignmentPeers is a reader's peers, and whether some watermarked input
// of a pipeline it feeds is not attached to a reader yet.
type alignmentPeers struct {
	readers    []*subjectReader
	unattached bool
}

// alignmentRefreshEvery is how many messages a reader takes between
// looks at which readers are its peers (inputs move between readers as
// views start, stop and merge).
const alignmentRefreshEvery = 64

// alignmentPoll bounds how long a held reader waits before it looks at
// its peers again without being woken.
const alignmentPoll = 5 * time.Millisecond

// newEventClock returns the clock of a reader whose first input's scan
// has watermark w (nil: none).
func newEventClock(w *plan.Watermark) *eventClock {
	c := &eventClock{col: -1}
	if w != nil {
		c.col = w.Col
	}
	c.backlog.Store(true)
	return c
}

// SetAlignmentDrift sets scan.watermark.alignment.max-drift (0: readers
// are not aligned).
func (rt *Runtime) SetAlignmentDrift(d time.Duration) {
	rt.alignDrift.Store(d.Microseconds())
	rt.eventTimeMoved.notify()
}

// noteEventTime records the event time of rows [from, chunk.Len()) just
// decoded. Caller holds mu.
func (r *subjectReader) noteEventTime(from int) {
	c := r.clock
	if c.col < 0 {
		return
	}
	seen, high := c.seen.Load(), c.max.Load()
	moved := false
	for _, row := range r.chunk.Rows[from:] {
		if v := row[c.col]; !v.IsNull() && (!seen || v.I > high) {
			seen, high, moved = true, v.I, true
		}
	}
	if moved {
		c.max.Store(high)
		c.seen.Store(true)
	}
	if c.sinceRefresh++; c.sinceRefresh >= alignmentRefreshEvery {
		r.refreshPeers()
	}
}

// setBacklog records whether the reader has messages to take.
func (r *subjectReader) setBacklog(b bool) {
	if r.clock.col >= 0 && r.clock.backlog.Load() != b {
		r.clock.backlog.Store(b)
		if !b {
			r.rt.eventTimeMoved.notify()
		}
	}
}

// setHeld sets held, which peers see as atLimit. Caller holds cmu.
func (r *subjectReader) setHeld(held bool) {
	r.held = held
	if r.clock.atLimit.Swap(held) != held && held {
		r.rt.eventTimeMoved.notify() // readers it held back may go on
	}
}

// refreshPeers finds the readers of the other watermarked inputs of the
// pipelines r feeds.
func (r *subjectReader) refreshPeers() {
	r.clock.sinceRefresh = 0
	if r.clock.col < 0 {
		return
	}
	r.cmu.Lock()
	subs := append([]*sourceReader(nil), r.subs...)
	r.cmu.Unlock()
	next := &alignmentPeers{}
	for _, s := range subs {
		if s.isGone() {
			continue
		}
		for _, t := range s.pipe.sources {
			if t == s || t.watermark == nil {
				continue
			}
			t.smu.Lock()
			p, gone := t.reader, t.gone
			t.smu.Unlock()
			switch {
			case gone || p == r:
			case p == nil:
				next.unattached = true
			default:
				next.readers = append(next.readers, p)
			}
		}
	}
	r.clock.peers.Store(next)
}

// aheadOfPeers reports whether r must hold its next message: its event
// time is more than the drift past a constraining peer's, or a peer's is
// not known yet.
func (r *subjectReader) aheadOfPeers() bool {
	c := r.clock
	drift := r.rt.alignDrift.Load()
	if drift <= 0 || c.col < 0 || !c.seen.Load() || r.waiting.Load() {
		return false
	}
	peers := c.peers.Load()
	if peers == nil {
		r.refreshPeers()
		peers = c.peers.Load()
	}
	if peers.unattached {
		return true
	}
	mine := c.max.Load()
	for _, p := range peers.readers {
		pc := p.clock
		if !pc.backlog.Load() || pc.atLimit.Load() || pc.col < 0 {
			continue
		}
		if !pc.seen.Load() || mine > pc.max.Load()+drift {
			return true
		}
	}
	return false
}

// waitForPeers holds r until a peer's event time may have moved (or a
// short poll passed), counting the time held. It reports false if ctx
// ended.
func (r *subjectReader) waitForPeers() bool {
	moved := r.rt.eventTimeMoved.wait()
	r.rt.alignWaiters.Add(1)
	defer r.rt.alignWaiters.Add(-1)
	start := time.Now()
	t := time.NewTimer(alignmentPoll)
	defer t.Stop()
	select {
	case <-moved:
	case <-t.C:
	case <-r.unheld:
	case <-r.rt.pauseSignal():
	case <-r.ctx.Done():
		return false
	}
	r.alignedWait.Add(time.Since(start).Nanoseconds())
	r.refreshPeers()
	return true
}

// notifyEventTime wakes held readers when r has sent rows on: their peers'
// event time may have moved.
func (r *subjectReader) notifyEventTime() {
	if r.clock.col >= 0 && r.rt.alignWaiters.Load() > 0 {
		r.rt.eventTimeMoved.notify()
	}
}

// alignmentWaitOf returns the counter of the time readers of stream were
// held by alignment, in nanoseconds.
func (rt *Runtime) alignmentWaitOf(stream string) *atomic.Int64 {
	c, _ := rt.alignWaits.LoadOrStore(stream, new(atomic.Int64))
	return c.(*atomic.Int64)
}

// AlignmentWaits returns, by stream, the time its readers were held by
// watermark alignment since the server started.
func (rt *Runtime) AlignmentWaits() map[string]time.Duration {
	out := map[string]time.Duration{}
	rt.alignWaits.Range(func(k, v any) bool {
		out[k.(string)] = time.Duration(v.(*atomic.Int64).Load())
		return true
	})
	return out
}
