package exec

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"streamdb/storage"
	"streamdb/types"
)

// subjectReader owns one JetStream ordered consumer on one subject and one
// decoder, and sends what it reads to every pipeline input (sourceReader)
// attached to it: each chunk once to each (operators never modify the
// chunks they receive, so they share them), each malformed message, and
// each barrier. Views that read a subject from the same position share
// one reader (readerGroup); a view that starts elsewhere (a new view's
// backfill, a moved position) reads with a private one until it joins.
//
// The consumer's callback (one goroutine, the subscription's) decodes each
// message straight into the chunk being built and sends the chunk when it
// holds chunkRows rows. run's goroutine sends barriers. Invariants:
//   - chunks, skipped messages and barriers are only sent holding mu, and
//     a barrier flushes the partial chunk first: a barrier follows every
//     row of every message before it, for every attached input;
//   - pos is the stream sequence of the last message taken (decoded or
//     skipped), so a barrier's position covers exactly the rows before
//     it; messages at or below pos (redelivered) are dropped;
//   - while the runtime is paused, or holds input back and the reader has
//     taken its allowance since its last barrier (input_hold.go), the
//     callback waits before taking a message (without mu), so barriers
//     still pass and input waits;
//   - while the reader is more than the alignment drift ahead of a peer
//     in event time, the callback waits the same way
//     (watermark_alignment.go);
//   - while limit is set the callback takes no message past it (see
//     merge.go): held then says it holds one, and pos counts as limit;
//   - cmu guards pos, subs, limit, limited, held, emitted and plan, and is never
//     held while blocking, so the group can read a reader's state and set
//     its limit at any time. pos and subs change under mu and cmu both.
type subjectReader struct {
	grp      *readerGroup
	name     string
	table    bool // the subject is a table's changelog
	jsStream string
	subject  string
	decoder  messageDecoder
	// noColumn counts the messages of a stream none of whose fields
	// names a column (RowDecoder.NoColumn): rows of NULLs.
	noColumn atomic.Uint64
	// keyStats is the decoder's KeyStats as of the last chunk sent
	// (under statsMu; see publishKeyStats).
	statsMu  sync.Mutex
	keyStats KeyStats
	rt       *Runtime
	log      *slog.Logger
	start    uint64 // sequence of the last message before the first read

	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}

	mu    sync.Mutex
	chunk *Chunk // rows not yet sent (under mu)
	// chunkMsgs counts the messages taken into chunk and chunkSince is
	// when the first was (under mu; see chunkAged).
	chunkMsgs  int
	chunkSince time.Time

	cmu     sync.Mutex
	pos     uint64
	subs    []*sourceReader
	emitted uint64 // newest barrier epoch sent
	// sinceEmit counts the messages taken (decoded or skipped) since
	// that barrier.
	sinceEmit int
	limit     uint64 // valid while limited
	limited   bool   // a merge limit is set; limit may be 0 (a reader at the start)
	held      bool
	limitCh   chan struct{} // closed when limit is lifted
	plan      *mergePlan
	incoming  int // inputs a plan moves here, not attached yet

	// heldAt is the sequence of a message the reader holds at a
	// ceiling (0: none).
	heldAt  atomic.Uint64
	kick    chan struct{}
	waiting atomic.Bool
	// reaching is the message a barrier waits for (reach; 0: none), for
	// WaitReport.
	reaching atomic.Uint64
	progress chan struct{}
	unheld   chan struct{} // see heldBack
	// free holds chunks every pipeline is done with (see chunkRef).
	free chan *Chunk
	// clock is the reader's event time, for watermark alignment
	// (watermark_alignment.go); alignedWait counts the nanoseconds the
	// readers of its stream were held by it.
	clock       *eventClock
	alignedWait *atomic.Int64
	// cutter holds messages past the cut of a Debezium stream's
	// transactions (envelope_txn.go); nil for others.
	cutter *txnCutter
}

func newSubjectReader(g *readerGroup, first *sourceReader) *subjectReader {
	ctx, cancel := context.WithCancel(first.rt.ctx)
	return &subjectReader{
		grp: g, name: first.name, table: first.table, jsStream: first.jsStream, subject: first.subject,
		decoder: first.decoder, rt: first.rt, log: first.log.With(slog.String("stream", first.name)),
		start: first.pos.Seq, pos: first.pos.Seq,
		ctx: ctx, cancel: cancel, done: make(chan struct{}),
		subs: []*sourceReader{first}, limitCh: make(chan struct{}),
		kick: make(chan struct{}, 1), progress: make(chan struct{}, 1), unheld: make(chan struct{}, 1), free: make(chan *Chunk, freeChunks),
		clock: newEventClock(first.watermark), alignedWait: first.rt.alignmentWaitOf(first.name),
		cutter: first.cutter,
	}
}

// wake makes run look at its inputs' barrier requests again.
func (r *subjectReader) wake() {
	select {
	case r.kick <- struct{}{}:
	default:
	}
}

// run reads until ctx ends, the reader fails (its inputs fail with it),
// or no input is left.
func (r *subjectReader) run() {
	err := r.consume()
	r.grp.finish(r, err)
	close(r.done)
}

func (r *subjectReader) consume() error {
	cfg := jetstream.OrderedConsumerConfig{FilterSubjects: []string{r.subject}}
	// The input after the recorded position must still be there, or the
	// view would silently miss it. (New views start at the oldest retained
	// message, recorded as the position before it.)
	first, err := r.rt.broker.FirstSeq(r.ctx, r.jsStream)
	if err != nil {
		if r.ctx.Err() != nil {
			return nil
		}
		return err
	}
	if first > r.start+1 {
		remedy := fmt.Sprintf("raise the stream's retention, or move the source with ALTER STREAM %s SET POSITION", r.name)
		if r.table {
			// A table's changelog is its rows' only record: there is
			// no later position to move to.
			remedy = fmt.Sprintf("the changelog of table %s: restore a checkpoint or savepoint it still holds, or re-create the table", r.name)
		}
		return fmt.Errorf("%w: resuming needs JetStream stream %s from sequence %d, but it retains only sequences from %d on; messages %d..%d are gone (%s)",
			ErrInputLost, r.jsStream, r.start+1, first, r.start+1, first-1, remedy)
	}
	if r.clock.col >= 0 {
		last, err := r.rt.broker.LastSeqForSubject(r.ctx, r.jsStream, r.subject)
		r.setBacklog(err == nil && last > r.start)
	}
	if r.start > 0 {
		cfg.DeliverPolicy = jetstream.DeliverByStartSequencePolicy
		cfg.OptStartSeq = r.start + 1
	}
	cons, err := r.rt.broker.JS.OrderedConsumer(r.ctx, r.jsStream, cfg)
	if err != nil {
		if r.ctx.Err() != nil {
			return nil
		}
		return err
	}
	r.chunk = r.newChunk()
	cc, err := cons.Consume(func(m jetstream.Msg) { r.take(m) }, ConsumeOptions()...)
	if err != nil {
		return err
	}
	defer r.deleteConsumer(cons)
	defer cc.Stop()
	defer r.cancel() // first: a callback held by a limit returns
	for {
		select {
		case <-r.ctx.Done():
			return nil
		case <-r.kick:
		}
		if !r.round() {
			return nil
		}
	}
}

// round does what the reader's inputs and its group ask of it now: it
// sends every barrier its inputs asked for, takes its part in a merge
// (handOver, settle, coordinate), and reports false once the reader is to
// stop: ctx ended, or it feeds no pipeline and is to feed none (retire).
func (r *subjectReader) round() bool {
	for {
		e, need, cut, ok := r.nextBarrier()
		if !ok {
			break
		}
		if !r.reach(need) || !r.reachCut(cut) || !r.emit(e) {
			return false
		}
	}
	if !r.handOver() || !r.settle() {
		return false
	}
	r.grp.coordinate(r)
	return !r.grp.retire(r)
}

// deleteConsumer removes a stopped reader's consumer from JetStream at
// once, so that the stream lists only the consumers of running readers
// (JetStream would drop it only after 5 minutes without pulls). At
// shutdown that is left to JetStream.
func (r *subjectReader) deleteConsumer(cons jetstream.Consumer) {
	if r.rt.ctx.Err() != nil {
		return
	}
	info := cons.CachedInfo()
	if info == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := r.rt.broker.JS.DeleteConsumer(ctx, r.jsStream, info.Name); err != nil && !errors.Is(err, jetstream.ErrConsumerNotFound) {
		r.log.Debug("delete stopped consumer", "err", err)
	}
}

// settle carries out a merge into r at once when r feeds no running
// pipeline of its own, so sends no barrier that would carry it out: the
// moving inputs get their barriers up to the plan's epoch from the reader
// they leave. It reports false if ctx ended.
func (r *subjectReader) settle() bool {
	r.cmu.Lock()
	p := r.plan
	idle := p != nil && p.into == r
	for _, s := range r.subs {
		idle = idle && s.isGone()
	}
	r.cmu.Unlock()
	if !idle {
		return true
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.carryOut(p)
}

// nextBarrier returns the next epoch to send and the sequence it must
// follow (a fence), once every live input has forwarded its requests up
// to that epoch, so that each input that asked for it gets it here. A
// private reader whose inputs move to the shared one sends them no
// barrier past the plan's epoch: those are the shared reader's to send.
func (r *subjectReader) nextBarrier() (e, need, cut uint64, ok bool) {
	r.cmu.Lock()
	defer r.cmu.Unlock()
	upTo := uint64(math.MaxUint64)
	if p := r.plan; p != nil && p.into != r {
		upTo = p.epoch
	}
	for _, s := range r.subs {
		s.smu.Lock()
		for _, q := range s.reqs {
			if !s.gone && q.epoch > r.emitted && q.epoch <= upTo && (e == 0 || q.epoch < e) {
				e = q.epoch
			}
		}
		s.smu.Unlock()
	}
	if e == 0 {
		return 0, 0, 0, false
	}
	for _, s := range r.subs {
		s.smu.Lock()
		behind := !s.gone && s.high < e
		for _, q := range s.reqs {
			if q.epoch == e {
				need = max(need, q.need)
				cut = max(cut, q.cut)
			}
		}
		s.smu.Unlock()
		if behind {
			return 0, 0, 0, false
		}
	}
	return e, need, cut, true
}

// emit sends barrier e to the inputs that asked for it, after the rows
// taken so far; the shared reader carries out a merge plan that falls at
// e. It reports false if ctx ended.
func (r *subjectReader) emit(e uint64) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cmu.Lock()
	plan := r.plan
	r.cmu.Unlock()
	if plan != nil && plan.into != r {
		if e > plan.epoch {
			return true // planned since nextBarrier: the shared reader's to send
		}
		plan = nil // handOver carries it out
	}
	if plan != nil && e > plan.epoch && !r.carryOut(plan) {
		return false // the plan's epoch came to none of our inputs
	}
	if !r.flushLocked() {
		return false
	}
	r.cmu.Lock()
	r.emitted, r.sinceEmit = e, 0
	r.unhold()
	pos := r.pos
	var to []*sourceReader
	for _, s := range r.subs {
		s.smu.Lock()
		if _, asked := s.takeRequest(e); asked && !s.gone {
			to = append(to, s)
		}
		s.smu.Unlock()
	}
	r.cmu.Unlock()
	for _, s := range to {
		if !s.send(r.ctx, pipelineMsg{src: s.idx, from: r, barrier: e, pos: storage.SourcePosition{Seq: pos, Skipped: s.skippedTotal.Load()}}) {
			return false
		}
		s.barrierDelivered(e)
	}
	if plan != nil && e == plan.epoch {
		return r.carryOut(plan)
	}
	return true
}

// reach waits until the reader has taken the message at sequence need, so
// that a barrier falls after it (see Runtime.PublishFenced). A paused
// reader takes nothing, so it does not wait then; a reader held by a
// merge limit below need gives the merge up first (merge.go), paused or
// not. It reports false if ctx ended.
func (r *subjectReader) reach(need uint64) bool {
	if need == 0 {
		return true
	}
	r.waiting.Store(true)
	r.reaching.Store(need)
	defer r.waiting.Store(false)
	defer r.reaching.Store(0)
	r.unhold()
	for {
		r.cmu.Lock()
		done := r.pos >= need
		limited := r.limited && r.limit < need
		r.cmu.Unlock()
		if limited {
			// Give the merge up before this barrier can be the plan's:
			// a reader that carried the plan out below need would leave
			// the other one limited below the fence for good. Paused
			// readers too, since they emit below need.
			r.grp.abandon(r)
		}
		if done || r.rt.Paused() {
			return true
		}
		select {
		case <-r.ctx.Done():
			return false
		case <-r.progress:
		case <-r.rt.pauseSignal():
		}
	}
}

// take is the consumer callback: it decodes one message into the chunk.
func (r *subjectReader) take(m jetstream.Msg) {
	seq, pending, ok := ackPosition(m.Reply())
	if !ok {
		meta, err := m.Metadata()
		if err != nil {
			r.log.Warn("message without JetStream metadata", "err", err)
			return
		}
		seq, pending = meta.Sequence.Stream, meta.NumPending
	}
	r.setBacklog(true) // this message, until it is taken
	for {
		if !r.waitToTake() || !r.belowCut(seq) || !r.belowCeilings(seq) {
			return
		}
		r.mu.Lock()
		r.cmu.Lock()
		if !r.limited || seq <= r.limit {
			break
		}
		// Past the merge limit: hold the message until it is lifted.
		r.setHeld(true)
		r.pos = max(r.pos, r.limit)
		lifted := r.limitCh
		r.cmu.Unlock()
		r.mu.Unlock()
		select {
		case <-lifted:
		case <-r.ctx.Done():
			return
		}
	}
	defer r.mu.Unlock()
	// The message is taken, or dropped as a redelivery: what remains is
	// what the consumer says is pending after it.
	defer r.setBacklog(pending > 0)
	if seq <= r.pos {
		r.cmu.Unlock()
		return // redelivery after a consumer reset
	}
	prev := r.pos
	r.pos = seq
	r.sinceEmit++
	r.cmu.Unlock()
	if r.waiting.Load() {
		select {
		case r.progress <- struct{}{}:
		default:
		}
	}
	from := r.chunk.Len()
	if err := r.decode(m, seq); err != nil {
		if r.ctx.Err() != nil {
			return // stopping while reading a transaction's data
		}
		var part *partTxnError
		if errors.As(err, &part) {
			r.failInputs(part)
			return
		}
		r.chunk.truncate(from) // no row of a skipped message goes out
		r.skipMessage(prev, seq, err)
		return
	}
	r.noteEventTime(from)
	if r.chunk.Len() >= chunkRows || r.chunkAged() {
		r.flushLocked()
	}
}

// chunkAged reports whether the chunk's first message was taken
// chunkMaxAge ago or more, looking at the clock once every 16 messages.
// Caller holds mu, after taking a message into the chunk.
func (r *subjectReader) chunkAged() bool {
	r.chunkMsgs++
	if r.chunkMsgs == 1 {
		r.chunkSince = time.Now()
		return false
	}
	return r.chunkMsgs%16 == 0 && time.Since(r.chunkSince) >= chunkMaxAge
}

// waitToTake blocks while the runtime is paused (ALTER SYSTEM PAUSE),
// holds this reader's input back (heldBack), or the reader is ahead of a
// peer in event time (aheadOfPeers). It reports false if ctx ended.
func (r *subjectReader) waitToTake() bool {
	for {
		paused, hold := r.rt.pauseSignal(), r.rt.hold.changed.wait()
		if !r.rt.Paused() && !r.heldBack() {
			if !r.aheadOfPeers() {
				return true
			}
			if !r.waitForPeers() {
				return false
			}
			continue
		}
		select {
		case <-paused:
		case <-hold:
		case <-r.unheld:
		case <-r.ctx.Done():
			return false
		}
	}
}

// skipMessage skips the message seq, which failed to decode with err: each
// input counts it (SHOW STREAMS, its position's Skipped) and is told,
// after the rows of the messages before it, so that its view lists it in
// streamdb_view_errors or stops there if it is on_error = 'fail'. prev is
// the sequence of the message taken before it. Caller holds mu.
func (r *subjectReader) skipMessage(prev, seq uint64, err error) {
	ok := r.flushAt(prev)
	var skipped uint64
	for _, s := range r.liveSubs() {
		n := s.skippedTotal.Add(1)
		skipped = max(skipped, n)
		if ok {
			ok = s.send(r.ctx, pipelineMsg{src: s.idx, from: r, skipped: err, pos: storage.SourcePosition{Seq: seq, Skipped: n}})
		}
	}
	if skipped <= 10 || skipped%1000 == 0 {
		r.log.Warn("skipping malformed message", "seq", seq, "skipped", skipped, "err", err)
	}
}

// failInputs stops the pipeline of every input with err, in band after
// what they received: the message being taken cannot be delivered whole
// and part of it went out. Caller holds mu.
func (r *subjectReader) failInputs(err error) {
	r.log.Error("stopping the views of a stream", "err", err)
	for _, s := range r.liveSubs() {
		if !s.send(r.ctx, pipelineMsg{src: s.idx, from: r, fail: err}) {
			return
		}
	}
}

// liveSubs returns the inputs whose pipelines still run. Caller holds mu.
func (r *subjectReader) liveSubs() []*sourceReader {
	r.cmu.Lock()
	defer r.cmu.Unlock()
	out := make([]*sourceReader, 0, len(r.subs))
	for _, s := range r.subs {
		if !s.isGone() {
			out = append(out, s)
		}
	}
	return out
}

// flushLocked sends the rows gathered so far as one chunk to every input.
// Caller holds mu.
func (r *subjectReader) flushLocked() bool {
	r.cmu.Lock()
	pos := r.pos
	r.cmu.Unlock()
	return r.flushAt(pos)
}

// flushAt flushes with pos as the sequence of the chunk's last message,
// which names the message of a row that fails (streamdb_view_errors).
func (r *subjectReader) flushAt(pos uint64) bool {
	r.chunkMsgs = 0
	if r.chunk.Len() == 0 {
		return true
	}
	c := r.chunk
	r.chunk = r.newChunk()
	r.publishKeyStats()
	defer r.notifyEventTime()
	subs := r.liveSubs()
	ref := &chunkRef{r: r}
	ref.refs.Store(int32(len(subs)))
	for _, s := range subs {
		if !s.send(r.ctx, pipelineMsg{src: s.idx, from: r, chunk: c, ref: ref, pos: storage.SourcePosition{Seq: pos, Skipped: s.skippedTotal.Load()}}) {
			return false
		}
	}
	return true
}

// newChunk returns an empty chunk: a recycled one if every pipeline gave
// it back, else a new one whose first slab holds all chunkRows rows.
func (r *subjectReader) newChunk() *Chunk {
	select {
	case c := <-r.free:
		c.recycle()
		return c
	default:
	}
	return &Chunk{Rows: make([]types.Row, 0, chunkRows), Signs: make([]int8, 0, chunkRows), slabRows: chunkRows}
}
