package exec

import (
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"
)

// An edge carries the changelog of one pipeline (a view's or a table's)
// to another pipeline that reads it: the changes the upstream materialize
// operator applies to its state table (deletes and inserts of its rows),
// with the upstream's barriers in band. The downstream pipeline treats an
// edge as one more input and aligns its barriers with its other inputs'.
// An edge has no position of its own: every pipeline commits the same
// epochs, so after a restart at epoch E the upstream's changes from E+1
// on are exactly what the downstream still needs (see attach.go).
//
// Rows on an edge are the upstream's own rows: operators never write to
// the rows they are pushed and materialize keeps none that its producers
// reuse (borrowsRows is false for it), so an edge shares them.

// edgeMsg is one item of an edge: a chunk of changes, or barrier != 0.
type edgeMsg struct {
	chunk   *Chunk
	barrier uint64
}

// edgeQueueChunks bounds the chunks an edge holds before the upstream
// waits for the downstream (barriers are always taken): a slow reader
// slows its upstream as a full channel slows a source reader.
const edgeQueueChunks = 32

// edge is one input of a downstream pipeline fed by an upstream's
// materialize operator.
type edge struct {
	up    *pipeline // the upstream pipeline
	idx   uint16    // the input index in the downstream pipeline
	head  Operator  // the downstream operator the edge's rows go to
	ncols int       // width of the upstream's rows

	// after is, for an edge attached to a running upstream, the barrier
	// after which it receives changes (set under the hub's lock). Such an
	// edge first emits the upstream's committed state at that epoch:
	// snapReady is closed once snapshot holds it. snapReady is nil for an
	// edge that resumes with its upstream from a restart (it receives
	// everything from the upstream's start), unless its view was emptied
	// to be backfilled (pipeline.reread): then it first emits the state
	// both resume from.
	after     uint64
	snapReady chan struct{}

	mu       sync.Mutex
	snapshot *pebble.Snapshot // under mu; the reader closes it
	closed   bool             // under mu: the reader ended
	q        []edgeMsg
	ready    chan struct{} // signalled when q gains an item
	room     chan struct{} // signalled when the reader takes q
	gone     chan struct{} // closed when the downstream's reader ends
}

func newEdge(up *pipeline, idx uint16, head Operator, ncols int) *edge {
	return &edge{up: up, idx: idx, head: head, ncols: ncols,
		ready: make(chan struct{}, 1), room: make(chan struct{}, 1), gone: make(chan struct{})}
}

// put queues m for the downstream. A chunk waits while the queue is full;
// put reports false once the downstream is gone, and gives up when stop
// (the upstream's end) is closed.
func (e *edge) put(m edgeMsg, stop <-chan struct{}) bool {
	for {
		select {
		case <-e.gone:
			// Checked first: a queue with room would otherwise keep
			// taking the barriers of an upstream that forwards no
			// chunk, for a reader that has ended.
			return false
		default:
		}
		e.mu.Lock()
		if m.barrier != 0 || len(e.q) < edgeQueueChunks {
			e.q = append(e.q, m)
			e.mu.Unlock()
			select {
			case e.ready <- struct{}{}:
			default:
			}
			return true
		}
		e.mu.Unlock()
		select {
		case <-e.room:
		case <-e.gone:
			return false
		case <-stop:
			return true
		}
	}
}

// take returns everything queued (nil if nothing).
func (e *edge) take() []edgeMsg {
	e.mu.Lock()
	q := e.q
	e.q = nil
	e.mu.Unlock()
	if len(q) > 0 {
		select {
		case e.room <- struct{}{}:
		default:
		}
	}
	return q
}

// edgeHub is the output side of a materialize operator: the edges of the
// pipelines that read it. Only the upstream pipeline's goroutine calls
// forward and barrier; attach and join come from the runtime.
type edgeHub struct {
	// active mirrors len(outs)+len(joining) so that a view nobody reads
	// pays one atomic load per chunk.
	active atomic.Int32
	// stop is closed when the upstream pipeline stops (set at its start).
	stop <-chan struct{}

	mu   sync.Mutex
	outs []*edge
	// joining holds edges that start receiving after barrier e.after;
	// last is the newest barrier passed on.
	joining []*edge
	last    uint64
	// subs are the view's subscribers (subscribe.go).
	subs subHub
	// sinks are the view's sinks (sink_outbox.go).
	sinks sinkTaps
}

// attach adds an edge that receives every change from now on; the
// upstream must not have processed any input yet (a restart).
func (h *edgeHub) attach(e *edge) {
	h.mu.Lock()
	h.outs = append(h.outs, e)
	h.active.Add(1)
	h.mu.Unlock()
}

// joinLocked adds an edge that starts receiving after barrier e.after;
// the caller holds h.mu and has checked that the upstream has not
// processed that barrier yet (joinAll): the barrier reaches the
// upstream's readers before the runtime joins the edge, and changes after
// it may be gone by.
func (h *edgeHub) joinLocked(e *edge) {
	h.joining = append(h.joining, e)
	h.active.Add(1)
}

// forward passes c, the changes materialize applied, to every edge.
func (h *edgeHub) forward(c *Chunk) {
	if c.Len() == 0 {
		return
	}
	h.subs.forward(c)
	if h.sinks.active() {
		h.sinks.cur = append(h.sinks.cur, c)
	}
	h.send(edgeMsg{chunk: c})
}

// barrier passes barrier id on, then starts the edges that join after it.
func (h *edgeHub) barrier(id uint64) {
	h.subs.barrier(id)
	h.send(edgeMsg{barrier: id})
	h.mu.Lock()
	defer h.mu.Unlock()
	h.last = id
	kept := h.joining[:0]
	for _, e := range h.joining {
		if e.after == id {
			h.outs = append(h.outs, e)
			continue
		}
		kept = append(kept, e)
	}
	clear(h.joining[len(kept):])
	h.joining = kept
}

func (h *edgeHub) send(m edgeMsg) {
	h.mu.Lock()
	outs := append([]*edge(nil), h.outs...)
	h.mu.Unlock()
	for _, e := range outs {
		if !e.put(m, h.stop) {
			h.drop(e)
		}
	}
}

// drop forgets an edge whose downstream stopped.
func (h *edgeHub) drop(gone *edge) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for i, e := range h.outs {
		if e == gone {
			h.outs = append(h.outs[:i], h.outs[i+1:]...)
			h.active.Add(-1)
			return
		}
	}
}

// readers reports whether any edge reads the hub (or is about to).
func (h *edgeHub) readers() bool {
	return h.active.Load() > 0 || h.subs.active.Load() > 0 || h.sinks.active()
}
