package exec

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"

	"streamdb/sqlerr"
)

// Subscribers (SUBSCRIBE) consume a view's changes outside the dataflow.
// The view's materialize operator hands its hub the changes it applies
// and its barriers (edge.go); the hub seals each epoch's changes at its
// barrier and releases them only when the runtime commits that epoch
// (commitSubscribersLocked), so a subscriber never sees a change a crash
// or a rollback could undo. Handing over never blocks the pipeline: a
// subscriber whose queue passes its bound is cut off with an error.
//
// A new subscriber joins at the next barrier b the view passes: it gets
// a Pebble snapshot of the store taken when b commits (the view's rows at
// b), then every epoch after b, in order, empty ones included.

// subHub is the subscriber side of a view's edgeHub.
type subHub struct {
	// active counts joining and joined subscribers: the materialize
	// operator collects changes only while it is non-zero.
	active atomic.Int32

	mu      sync.Mutex
	cur     []*Chunk      // changes since the last barrier
	sealed  []sealedEpoch // epochs whose barrier passed, not committed yet
	joining []*Subscription
	subs    []*Subscription
}

// sealedEpoch is the changes one epoch applied to the view, as the
// materialize operator forwarded them (not consolidated).
type sealedEpoch struct {
	id     uint64
	chunks []*Chunk
	rows   int
}

// forward records c, changes of the epoch in progress.
func (h *subHub) forward(c *Chunk) {
	if h.active.Load() == 0 {
		return
	}
	h.mu.Lock()
	h.cur = append(h.cur, c)
	h.mu.Unlock()
}

// barrier seals the epoch that barrier id ends and lets the subscribers
// waiting to join start after it. An epoch in progress when the first
// subscriber joined is incomplete: nobody receives it.
func (h *subHub) barrier(id uint64) {
	if h.active.Load() == 0 {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.subs) > 0 {
		n := 0
		for _, c := range h.cur {
			n += c.Len()
		}
		h.sealed = append(h.sealed, sealedEpoch{id: id, chunks: h.cur, rows: n})
	}
	h.cur = nil
	for _, s := range h.joining {
		s.start = id
		h.subs = append(h.subs, s)
	}
	h.joining = nil
}

// commit releases the sealed epochs up to e, which the runtime just
// committed, and gives subscribers that joined at e their snapshot.
func (h *subHub) commit(e uint64, snapshot func() *pebble.Snapshot) {
	h.mu.Lock()
	defer h.mu.Unlock()
	done := 0
	for _, ep := range h.sealed {
		if ep.id > e {
			break
		}
		done++
		kept := h.subs[:0]
		for _, s := range h.subs {
			if ep.id <= s.start || s.push(ep) {
				kept = append(kept, s)
				continue
			}
			h.active.Add(-1)
		}
		clear(h.subs[len(kept):])
		h.subs = kept
	}
	h.sealed = append(h.sealed[:0], h.sealed[done:]...)
	for _, s := range h.subs {
		if s.start == e {
			s.begin(snapshot())
		}
	}
	if len(h.subs) == 0 {
		h.sealed = nil
	}
}

// remove forgets s (its reader is done).
func (h *subHub) remove(s *Subscription) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, list := range []*[]*Subscription{&h.joining, &h.subs} {
		for i, x := range *list {
			if x == s {
				*list = append((*list)[:i], (*list)[i+1:]...)
				h.active.Add(-1)
				return
			}
		}
	}
}

// Subscription is one subscriber of a view.
type Subscription struct {
	hub  *subHub
	done <-chan struct{} // the view's pipeline ended
	name string
	max  int // bound on rows queued (an empty epoch counts one)

	start uint64 // the epoch of the snapshot; set under hub.mu

	mu      sync.Mutex
	started bool
	snap    *pebble.Snapshot
	queue   []sealedEpoch
	queued  int
	err     error
	ready   chan struct{}
	closed  bool
}

// Subscribe adds a subscriber to view id's changes; it holds at most
// maxRows changes not yet taken by Next before it is cut off. The caller
// must Close it.
func (rt *Runtime) Subscribe(id uint32, maxRows int) (*Subscription, error) {
	rt.mu.Lock()
	p := rt.pipelines[id]
	joining := p != nil && rt.joiningLocked(id)
	rt.mu.Unlock()
	if p == nil || p.hub == nil || joining {
		return nil, sqlerr.New(sqlerr.ObjectNotInPrerequisiteState, "materialized view is not running").
			WithHint("Check SHOW VIEWS for its status, then SUBSCRIBE again.")
	}
	h := &p.hub.subs
	s := &Subscription{hub: h, done: p.done, name: p.name, max: max(maxRows, 1), ready: make(chan struct{}, 1)}
	h.mu.Lock()
	h.joining = append(h.joining, s)
	h.active.Add(1)
	h.mu.Unlock()
	return s, nil
}

// begin hands s the store's snapshot at its start epoch.
func (s *Subscription) begin(snap *pebble.Snapshot) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		snap.Close()
		return
	}
	s.started, s.snap = true, snap
	s.signal()
}

// push queues ep; false once s is over its bound (s then holds an error).
func (s *Subscription) push(ep sealedEpoch) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.queued += max(ep.rows, 1)
	if s.queued > s.max {
		s.queue = nil
		s.err = sqlerr.New(sqlerr.ProgramLimitExceeded, "subscriber to %s fell behind by more than %d changes and was disconnected", s.name, s.max).
			WithHint("Read the changes faster, or SUBSCRIBE WITH (max_buffered_rows = n) with a larger n.")
		s.signal()
		return false
	}
	s.queue = append(s.queue, ep)
	s.signal()
	return true
}

func (s *Subscription) signal() {
	select {
	case s.ready <- struct{}{}:
	default:
	}
}

// Start waits until the subscription's start epoch has committed and
// returns it with a snapshot of the store at it; the caller closes the
// snapshot.
func (s *Subscription) Start(ctx context.Context) (uint64, *pebble.Snapshot, error) {
	for {
		s.mu.Lock()
		started, snap, err := s.started, s.snap, s.err
		s.snap = nil
		s.mu.Unlock()
		if started {
			return s.start, snap, nil
		}
		if err != nil {
			return 0, nil, err
		}
		if err := s.wait(ctx); err != nil {
			return 0, nil, err
		}
	}
}

// EpochChanges is the changes one committed epoch applied to the view.
type EpochChanges struct {
	Epoch  uint64
	chunks []*Chunk
}

// Next waits for committed epochs after the start and returns those
// queued, in epoch order.
func (s *Subscription) Next(ctx context.Context) ([]EpochChanges, error) {
	for {
		s.mu.Lock()
		q, err := s.queue, s.err
		s.queue, s.queued = nil, 0
		s.mu.Unlock()
		if len(q) > 0 {
			out := make([]EpochChanges, len(q))
			for i, ep := range q {
				out[i] = EpochChanges{Epoch: ep.id, chunks: ep.chunks}
			}
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		if err := s.wait(ctx); err != nil {
			return nil, err
		}
	}
}

// wait blocks until s is signalled, the view stops or ctx ends.
func (s *Subscription) wait(ctx context.Context) error {
	select {
	case <-s.ready:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-s.done:
		// Epochs committed before the view stopped are queued already.
		s.mu.Lock()
		n := len(s.queue)
		s.mu.Unlock()
		if n > 0 {
			return nil
		}
		return sqlerr.New(sqlerr.ObjectNotInPrerequisiteState, "materialized view %s stopped or restarted (DROP, ROLLBACK TO, ALTER STREAM or a failure); its change feed ended", s.name).
			WithHint("SUBSCRIBE again, AS OF EPOCH the last epoch received if a retained checkpoint or savepoint is at that epoch.")
	}
}

// Close takes s off its view and frees what it holds.
func (s *Subscription) Close() {
	s.hub.remove(s)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	if s.snap != nil {
		s.snap.Close()
		s.snap = nil
	}
	s.queue = nil
}

// commitSubscribersLocked releases epoch e, just committed, to the
// subscribers of the pipelines that took part in it.
func (rt *Runtime) commitSubscribersLocked(e uint64) {
	for _, p := range rt.pipelines {
		if p.hub == nil || p.hub.subs.active.Load() == 0 {
			continue
		}
		p.hub.subs.commit(e, func() *pebble.Snapshot { return rt.store.DB().NewSnapshot() })
	}
}
