package exec

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/nats-io/nats.go/jetstream"

	"streamdb/broker"
	"streamdb/storage"
	"streamdb/types"
)

// ErrInputLost means JetStream no longer holds input a view needs.
var ErrInputLost = errors.New("input no longer retained")

// chunkRows is how many rows a source gathers before it sends a chunk
// without waiting for the next barrier.
const chunkRows = 1024

// sourceReader owns one JetStream ordered consumer for one input of one
// pipeline. The consumer's callback (one goroutine, the subscription's)
// decodes each message straight into the chunk being built and hands the
// chunk to the pipeline when it holds chunkRows rows: one channel send per
// chunk, not per message. run's goroutine turns barrier requests into
// in-band barriers.
//
// Invariants, all kept under mu:
//   - a barrier is sent after every row of every message before it: the
//     barrier path flushes the partial chunk first, and chunks and barriers
//     are only ever sent while holding mu;
//   - pos.Seq is the stream sequence of the last message taken (decoded or
//     skipped as malformed), so the position a barrier carries covers
//     exactly the rows sent before it;
//   - messages at or below pos.Seq (redelivered after a consumer reset) are
//     dropped;
//   - while the runtime is paused the callback waits before taking a
//     message (without mu), so barriers still pass and input waits.
type sourceReader struct {
	idx      uint16
	name     string // SQL stream name, for logs
	jsStream string
	subject  string
	decoder  messageDecoder
	broker   *broker.Broker
	rt       *Runtime
	log      *slog.Logger

	mu    sync.Mutex
	pos   storage.SourcePosition // position of the last message taken
	chunk *Chunk                 // rows not yet sent

	barriers chan barrierRequest
	// waiting is set while a barrier waits for the reader to take a
	// message (barrierRequest.need); take then signals progress.
	waiting  atomic.Bool
	progress chan struct{}
	out      chan<- pipelineMsg
	// free holds chunks the pipeline is done with (see pipeline.recycle),
	// to decode into again instead of allocating.
	free chan *Chunk
	// skippedTotal mirrors pos.Skipped for readers outside the goroutine.
	skippedTotal atomic.Uint64
}

func (s *sourceReader) run(ctx context.Context) error {
	cfg := jetstream.OrderedConsumerConfig{FilterSubjects: []string{s.subject}}
	// The input after the recorded position must still be there, or the
	// view would silently miss it. (New views start at the oldest retained
	// message, recorded as the position before it.)
	first, err := s.broker.FirstSeq(ctx, s.jsStream)
	if err != nil {
		return err
	}
	if first > s.pos.Seq+1 {
		return fmt.Errorf("%w: resuming needs JetStream stream %s from sequence %d, but it retains only sequences from %d on; messages %d..%d are gone (raise the stream's retention, or move the source with ALTER STREAM %s SET POSITION)",
			ErrInputLost, s.jsStream, s.pos.Seq+1, first, s.pos.Seq+1, first-1, s.name)
	}
	if s.pos.Seq > 0 {
		cfg.DeliverPolicy = jetstream.DeliverByStartSequencePolicy
		cfg.OptStartSeq = s.pos.Seq + 1
	}
	cons, err := s.broker.JS.OrderedConsumer(ctx, s.jsStream, cfg)
	if err != nil {
		return err
	}
	s.chunk = s.newChunk()
	cc, err := cons.Consume(func(m jetstream.Msg) { s.take(ctx, m) }, ConsumeOptions()...)
	if err != nil {
		return err
	}
	defer cc.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case b := <-s.barriers:
			if !s.reach(ctx, b.need) {
				return nil
			}
			s.mu.Lock()
			ok := s.flushLocked(ctx) && s.send(ctx, pipelineMsg{src: s.idx, barrier: b.epoch, pos: s.pos})
			s.mu.Unlock()
			if !ok {
				return nil
			}
		}
	}
}

// reach waits until the reader has taken the message at sequence need, so
// that a barrier falls after it (see Runtime.PublishFenced). A paused
// reader takes nothing, so it does not wait then. It reports false if ctx
// ended.
func (s *sourceReader) reach(ctx context.Context, need uint64) bool {
	if need == 0 {
		return true
	}
	s.waiting.Store(true)
	defer s.waiting.Store(false)
	for {
		s.mu.Lock()
		done := s.pos.Seq >= need
		s.mu.Unlock()
		if done || s.rt.Paused() {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-s.progress:
		case <-s.rt.pauseSignal():
		}
	}
}

// ConsumeOptions are the pull settings of every source reader: requests
// for up to 4 MiB of messages at a time rather than nats.go's default of
// 500 messages, which made a single reader wait on round trips between
// its pulls (the benchmark's ceiling reads with the same settings). A byte
// bound, unlike a message count, also bounds the buffer when messages are
// large (a table's changelog messages reach ~900 KiB).
func ConsumeOptions() []jetstream.PullConsumeOpt {
	return []jetstream.PullConsumeOpt{jetstream.PullMaxBytes(4 << 20)}
}

// newChunk returns an empty chunk: a recycled one if the pipeline gave
// one back, else a new one whose first slab holds all chunkRows rows.
func (s *sourceReader) newChunk() *Chunk {
	select {
	case c := <-s.free:
		c.recycle()
		return c
	default:
	}
	return &Chunk{Rows: make([]types.Row, 0, chunkRows), Signs: make([]int8, 0, chunkRows), slabRows: chunkRows}
}

// Recycled chunks a reader keeps: up to freeChunks, holding at most
// freeBytes of datums. A reader runs ahead of its pipeline in bursts (the
// pipeline stalls at barriers while the reader fills the 64-chunk queue),
// so a few kept chunks would not cover the next burst.
const (
	freeChunks = 16
	freeBytes  = 8 << 20
)

// recycle takes back a chunk this reader sent, once the pipeline is done
// with its rows; beyond the bounds above, the chunk is dropped.
func (s *sourceReader) recycle(c *Chunk) {
	if (len(s.free)+1)*cap(c.base)*int(unsafe.Sizeof(types.Datum{})) > freeBytes {
		return
	}
	select {
	case s.free <- c:
	default:
	}
}

// take is the consumer callback: it decodes one message into the chunk.
func (s *sourceReader) take(ctx context.Context, m jetstream.Msg) {
	if !s.waitUnpaused(ctx) {
		return
	}
	seq, ok := streamSeq(m.Reply())
	if !ok {
		meta, err := m.Metadata()
		if err != nil {
			s.log.Warn("message without JetStream metadata", "stream", s.name, "err", err)
			return
		}
		seq = meta.Sequence.Stream
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if seq <= s.pos.Seq {
		return // redelivery after a consumer reset
	}
	prev := s.pos.Seq
	s.pos.Seq = seq
	if s.waiting.Load() {
		select {
		case s.progress <- struct{}{}:
		default:
		}
	}
	if err := s.decoder.decodeInto(m.Data(), s.chunk); err != nil {
		s.skipMessage(ctx, prev, err)
		return
	}
	if s.chunk.Len() >= chunkRows {
		s.flushLocked(ctx)
	}
}

// waitUnpaused blocks while the runtime is paused (ALTER SYSTEM PAUSE). It
// reports false if ctx ended.
func (s *sourceReader) waitUnpaused(ctx context.Context) bool {
	for {
		changed := s.rt.pauseSignal()
		if !s.rt.Paused() {
			return true
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return false
		}
	}
}

// flushLocked sends the rows gathered so far as one chunk. Caller holds mu.
func (s *sourceReader) flushLocked(ctx context.Context) bool {
	if s.chunk.Len() == 0 {
		return true
	}
	c := s.chunk
	s.chunk = s.newChunk()
	// pos tells the pipeline the sequence of the chunk's last message,
	// which names the message of a row that fails (streamdb_view_errors).
	return s.send(ctx, pipelineMsg{src: s.idx, chunk: c, pos: s.pos})
}

func (s *sourceReader) send(ctx context.Context, m pipelineMsg) bool {
	select {
	case s.out <- m:
		return true
	case <-ctx.Done():
		return false
	}
}

// streamSeq reads the stream sequence from a JetStream message's reply
// subject without allocating:
//
//	$JS.ACK.<stream>.<consumer>.<delivered>.<sseq>.<cseq>.<tm>.<pending>
//	$JS.ACK.<domain>.<acc hash>.<stream>.<consumer>.<delivered>.<sseq>.<cseq>.<tm>.<pending>[.<token>]
//
// It reports false for anything else (the caller falls back to Metadata).
func streamSeq(reply string) (uint64, bool) {
	if !strings.HasPrefix(reply, "$JS.ACK.") {
		return 0, false
	}
	tokens := strings.Count(reply, ".") + 1
	var pos int
	switch {
	case tokens == 9:
		pos = 5
	case tokens == 11 || tokens == 12:
		pos = 7
	default:
		return 0, false
	}
	rest := reply
	for range pos {
		rest = rest[strings.IndexByte(rest, '.')+1:]
	}
	if i := strings.IndexByte(rest, '.'); i >= 0 {
		rest = rest[:i]
	}
	n, err := strconv.ParseUint(rest, 10, 64)
	return n, err == nil
}
