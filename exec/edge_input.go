package exec

import (
	"context"
	"fmt"

	"github.com/cockroachdb/pebble/v2"

	"streamdb/storage"
)

// The downstream side of an edge: a goroutine of the reading pipeline
// that sends the edge's items to the pipeline loop as input idx, as a
// source reader does. Edge inputs are numbered after the source readers.

// run sends the upstream's state at the attach epoch first (for an edge
// attached to a running upstream), then the queued changes and barriers,
// until ctx ends. It fails when the upstream pipeline stops: the reader
// would otherwise wait for barriers that never come.
func (e *edge) run(ctx context.Context, out chan<- pipelineMsg) error {
	defer e.close()
	upDone := e.up.done
	if e.snapReady != nil {
		select {
		case <-ctx.Done():
			return nil
		case <-upDone:
			return e.upstreamStopped()
		case <-e.snapReady:
		}
		e.mu.Lock()
		snap := e.snapshot
		e.snapshot = nil
		e.mu.Unlock()
		err := e.emitState(ctx, snap, out)
		snap.Close()
		if err != nil {
			return err
		}
	}
	for {
		for _, m := range e.take() {
			select {
			case out <- pipelineMsg{src: e.idx, chunk: m.chunk, barrier: m.barrier}:
			case <-ctx.Done():
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-e.ready:
		case <-upDone:
			if ctx.Err() != nil {
				return nil
			}
			return e.upstreamStopped()
		}
	}
}

func (e *edge) upstreamStopped() error {
	if e.up.err != nil {
		return fmt.Errorf("%s, which this view reads, stopped: %w", e.up.name, e.up.err)
	}
	return fmt.Errorf("%s, which this view reads, stopped", e.up.name)
}

// emitState sends every row of the upstream's state table in snap as
// inserts (a row of multiplicity n n times).
func (e *edge) emitState(ctx context.Context, snap *pebble.Snapshot, out chan<- pipelineMsg) error {
	c := &Chunk{}
	flush := func() bool {
		if c.Len() == 0 {
			return true
		}
		select {
		case out <- pipelineMsg{src: e.idx, chunk: c}:
			c = &Chunk{}
			return true
		case <-ctx.Done():
			return false
		}
	}
	stopped := fmt.Errorf("stopped")
	err := storage.ScanPrefix(snap, ViewTablePrefix(e.up.id), func(_, v []byte) error {
		row, n, err := DecodeViewValue(v, e.ncols)
		if err != nil {
			return fmt.Errorf("read the state of %s: %w", e.up.name, err)
		}
		for range n {
			c.Append(row, Insert)
		}
		if c.Len() >= chunkRows && !flush() {
			return stopped
		}
		return nil
	})
	if err == stopped || (err == nil && !flush()) {
		return nil
	}
	return err
}

// deliver hands the edge the snapshot of its upstream's state at the
// attach epoch; the edge closes it (at once, if its reader has ended).
func (e *edge) deliver(snap *pebble.Snapshot) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed || e.snapshot != nil {
		snap.Close()
		return
	}
	e.snapshot = snap
	close(e.snapReady)
}

// close marks the reader ended: the upstream drops the edge, and a
// snapshot not read is released.
func (e *edge) close() {
	e.mu.Lock()
	e.closed = true
	if e.snapshot != nil {
		e.snapshot.Close()
		e.snapshot = nil
	}
	e.mu.Unlock()
	close(e.gone)
}

// inputs is the number of the pipeline's inputs: its source readers,
// then its edges.
func (p *pipeline) inputs() int { return len(p.sources) + len(p.edgeIn) }

// inputName names input i for view errors.
func (p *pipeline) inputName(i uint16) string {
	if int(i) < len(p.sources) {
		return p.sources[i].name
	}
	return p.edgeIn[int(i)-len(p.sources)].up.name
}

// headOf is the operator input i feeds.
func (p *pipeline) headOf(i uint16) Operator {
	if int(i) < len(p.sources) {
		return p.heads[i]
	}
	return p.edgeIn[int(i)-len(p.sources)].head
}

// allHeads lists the operators every input feeds, sources' then edges',
// then the VALUES branches' heads, which take barriers only.
func (p *pipeline) allHeads() []Operator {
	if len(p.edgeIn) == 0 && len(p.constHeads) == 0 {
		return p.heads
	}
	out := append([]Operator(nil), p.heads...)
	for _, e := range p.edgeIn {
		out = append(out, e.head)
	}
	return append(out, p.constHeads...)
}

// startEdges runs the readers of the pipeline's edges; a reader's error
// goes to errs and cancels the pipeline. Its hub stops waiting for slow
// readers when ctx ends, so that stopping pipelines in any order never
// leaves one blocked on a reader that is not stopped yet.
func (p *pipeline) startEdges(ctx context.Context, cancel context.CancelFunc, done func(), errs chan<- error) {
	if p.hub != nil {
		p.hub.stop = ctx.Done()
	}
	for _, e := range p.edgeIn {
		go func() {
			defer done()
			if err := e.run(ctx, p.in); err != nil {
				errs <- fmt.Errorf("input %s: %w", e.up.name, err)
				cancel()
			}
		}()
	}
}
