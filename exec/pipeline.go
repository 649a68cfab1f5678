package exec

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	"github.com/cockroachdb/pebble/v2"
	"github.com/prometheus/client_golang/prometheus"

	"streamdb/storage"
)

// pipelineMsg is what sources send to their pipeline: a chunk, a barrier
// (barrier != 0) with the source's position at it, or a message the
// source skipped (skipped != nil, the reason; pos at that message). A
// chunk's pos, when set, is the position after its last message (see
// seqOf).
type pipelineMsg struct {
	src     uint16
	chunk   *Chunk
	barrier uint64
	pos     storage.SourcePosition
	skipped error
	// fail, if set, stops the pipeline with it (failInputs).
	fail error
	// from is the subject reader that sent m, ref counts the pipelines
	// its chunk went to, and handoff, if set, says from hands the input
	// over to that reader (see feedOrder).
	from    *subjectReader
	ref     *chunkRef
	handoff *subjectReader
}

// pipeline is the running dataflow of one materialized view: its source
// readers and its operator chain, driven by one goroutine.
type pipeline struct {
	id      uint32
	name    string
	sources []*sourceReader
	// heads[i] receives the chunks of sources[i]: the first operator of
	// that source's branch of the dataflow.
	heads []Operator
	in    chan pipelineMsg
	rt    *Runtime
	log   *slog.Logger

	cancel context.CancelFunc
	done   chan struct{}
	// launched is set (under Runtime.mu) when the runtime starts the
	// pipeline; until then it takes part in no epoch (attach.go).
	launched bool
	err      error // set before done is closed

	mu        sync.Mutex
	committed []storage.SourcePosition // per source, at the newest committed epoch
	caches    []*cacheSlot             // state caches of its operators (memoryBudget)

	// acks carries closed epochs, in order, to the goroutine that hands
	// them to the runtime (which may commit them to Pebble there), so the
	// operators go on with the next epoch while one commits.
	acks chan epochAck

	// errs records the rows that failed inside the view (see
	// viewErrors); the runtime sets it before start.
	errs *viewErrors

	// rowsIn counts the rows the sources hand to the operators; ops are
	// the figures of each operator (op_count.go).
	rowsIn prometheus.Counter
	ops    []*opStats

	// edgeIn are the pipeline's inputs fed by other pipelines (inputs
	// len(sources) on); hub feeds the pipelines that read this one
	// (edge.go).
	edgeIn []*edge
	// reread is set for a view emptied by an ALTER that backfills it: its
	// edges, resumed with their upstreams, first send the upstreams' rows
	// at the epoch they resume from (attach.go).
	reread bool
	hub    *edgeHub
	// mat is the view's materialization (the end of its dataflow).
	mat *materializeOp
	// keyNames are the columns the view is keyed by (nil unless its
	// rows are materialized by a unique key): what its readers receive
	// is a set.
	keyNames []string

	// layout is how the dataflow is laid out, for ALTER (alter.go).
	layout *ViewLayout

	// constHeads are the heads of VALUES branches (op_values.go), which
	// no input feeds but which take every barrier. A pipeline without
	// inputs gets its barriers on clock, from the runtime.
	constHeads []Operator
	clock      chan uint64
}

type epochAck struct {
	epoch uint64
	batch *pebble.Batch
	spill *storage.Spill // the epoch's writes spilled to files, or nil
	pos   []storage.SourcePosition
}

func (p *pipeline) start(parent context.Context) {
	ctx, cancel := context.WithCancel(parent)
	p.cancel = cancel
	p.done = make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, p.inputs()+1)
	for _, s := range p.sources {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := s.run(ctx); err != nil {
				errs <- fmt.Errorf("source %s: %w", s.name, err)
				cancel()
			}
		}()
	}
	wg.Add(len(p.edgeIn))
	p.startEdges(ctx, cancel, wg.Done, errs)
	if p.clock != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.runClock(ctx)
		}()
	}
	p.acks = make(chan epochAck, 4)
	acked := make(chan struct{})
	go func() {
		defer close(acked)
		// Acks after a stop are harmless: the runtime drops the batch of
		// an epoch it no longer waits for or of a removed pipeline.
		for a := range p.acks {
			p.rt.ack(p, a.epoch, a.batch, a.spill, a.pos)
		}
	}()
	go func() {
		err := p.loop(ctx)
		cancel()
		close(p.acks) // only loop sends on acks
		<-acked
		wg.Wait()
		if err == nil {
			select {
			case err = <-errs:
			default:
			}
		}
		if err != nil && parent.Err() == nil {
			p.log.Error("view stopped", "view", p.name, "err", err)
		}
		p.err = err
		close(p.done)
	}()
}

// stop cancels the pipeline and waits for its goroutines (if it started).
func (p *pipeline) stop() {
	if p.cancel == nil {
		return
	}
	p.cancel()
	<-p.done
}

// loop feeds operator chains. With several sources it aligns barriers: once
// a source has delivered barrier e, its later messages wait until every
// source has delivered e (exactly-once alignment).
func (p *pipeline) loop(ctx context.Context) error {
	n := max(p.inputs(), 1)          // the clock is input 0 of a pipeline without inputs
	held := make([][]pipelineMsg, n) // messages of sources past the barrier
	arrived := make([]bool, n)
	positions := make([]storage.SourcePosition, n)
	var waiting int // sources whose barrier has not arrived
	// reuse[i]: source i's operators only borrow its rows, so a chunk
	// goes back to the source once pushed.
	reuse := make([]bool, n)
	for i, h := range p.heads {
		reuse[i] = borrowsRows(h)
	}
	var epoch uint64
	// seen[i] is the sequence of source i's last message known to the
	// loop (from barriers, and from chunks that carry their position), to
	// tell the sequence of a chunk that holds one message.
	seen := make([]uint64, n)
	for i := range seen {
		if i < len(p.committed) {
			seen[i] = p.committed[i].Seq
		}
	}

	var order feedOrder
	var handle func(m pipelineMsg) error
	aligned := p.rt.aligned.Load()
	handle = func(m pipelineMsg) error {
		if arrived[m.src] && (aligned || m.barrier != 0) {
			// Exactly-once: hold everything of a source that is past the
			// barrier. At-least-once: hold only its next barrier; its data
			// flows on and lands in this epoch's state although its
			// position is recorded before it, so a replay after recovery
			// may count it twice.
			held[m.src] = append(held[m.src], m)
			return nil
		}
		if m.fail != nil {
			return m.fail
		}
		if m.skipped != nil {
			seen[m.src] = m.pos.Seq
			return p.errs.message(p.sources[m.src].name, m.pos.Seq, m.skipped)
		}
		if arrived[m.src] || m.barrier == 0 {
			if p.rowsIn != nil {
				p.rowsIn.Add(float64(m.chunk.Len()))
			}
			p.errs.from(p.inputName(m.src), seqOf(m, seen))
			err := p.headOf(m.src).Push(m.chunk)
			p.errs.from("", 0)
			if err != nil {
				return err
			}
			if reuse[m.src] {
				m.release()
			}
			return nil
		}
		if waiting == 0 {
			epoch, waiting = m.barrier, n
		}
		arrived[m.src] = true
		positions[m.src] = m.pos
		seen[m.src] = m.pos.Seq
		waiting--
		if waiting > 0 {
			return nil
		}
		if err := p.commitEpoch(epoch, positions[:len(p.sources)]); err != nil {
			return err
		}
		clear(arrived)
		// Replay what arrived early, in order, per source.
		replay := held
		held = make([][]pipelineMsg, n)
		for _, q := range replay {
			for _, hm := range q {
				if err := handle(hm); err != nil {
					return err
				}
			}
		}
		return nil
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case m := <-p.in:
			for _, m := range order.admit(m, p.firstReader) {
				if err := handle(m); err != nil {
					return err
				}
			}
		}
	}
}

// commitEpoch closes epoch e in the operators and hands the batch of state
// changes and source positions to the runtime (through acks, in epoch
// order), which commits it together with every other pipeline's batch of
// the same epoch.
func (p *pipeline) commitEpoch(e uint64, positions []storage.SourcePosition) error {
	var sp *storage.Spill
	if p.mat != nil {
		sp = p.mat.takeSpill() // the epoch's writes spilled so far
	}
	b := p.rt.store.NewBatch()
	fail := func(err error) error {
		b.Close()
		sp.Close()
		return err
	}
	// Every branch carries the barrier; operators that join branches
	// (union) pass it on once all their inputs have.
	for _, h := range p.allHeads() {
		if err := h.Barrier(Epoch{ID: e, Batch: b}); err != nil {
			return fail(err)
		}
	}
	// Rows that fail at the barrier (in what aggregates emit) were
	// recorded by now; the record is state of this epoch.
	if err := p.errs.flush(b); err != nil {
		return fail(err)
	}
	pos := append([]storage.SourcePosition(nil), positions...)
	for i, sp := range pos {
		if err := storage.PutPosition(b, p.id, uint16(i), sp); err != nil {
			return fail(err)
		}
	}
	p.acks <- epochAck{epoch: e, batch: b, spill: sp, pos: pos}
	return nil
}

// committedPositions returns the source positions of the newest committed
// epoch.
func (p *pipeline) committedPositions() []storage.SourcePosition {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]storage.SourcePosition(nil), p.committed...)
}

// seqOf returns the JetStream sequence of the one message chunk m holds,
// or 0 when that is not known: m carries no position, or its rows may come
// from several messages. seen is updated to m's position.
func seqOf(m pipelineMsg, seen []uint64) uint64 {
	last := m.pos.Seq
	if last == 0 {
		return 0
	}
	prev := seen[m.src]
	seen[m.src] = last
	if last == prev+1 {
		return last
	}
	return 0
}
