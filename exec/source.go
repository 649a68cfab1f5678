package exec

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"streamdb/broker"
	"streamdb/plan"
	"streamdb/storage"
)

// ErrInputLost means JetStream no longer holds input a view needs.
var ErrInputLost = errors.New("input no longer retained")

// chunkRows is how many rows a source gathers before it sends a chunk
// without waiting for the next barrier.
const chunkRows = 1024

// chunkMaxAge is how long a source holds rows before it sends them
// without waiting for chunkRows or the next barrier. Pipelines then fold
// an epoch's rows while the epoch lasts, not all of them after its
// barrier, which every view must have done before the epoch commits and
// its rows are visible: with many views over a steady stream most of
// that work would otherwise start only at the barrier.
const chunkMaxAge = 4 * time.Millisecond

// sourceReader is one input of one pipeline that reads a JetStream
// subject (a stream, or a table's changelog). It does not read JetStream
// itself: a subjectReader does (shared_source.go), one per subject and
// decoder for every pipeline that reads the subject from the same
// position, and sends its chunks, skipped messages and barriers to this
// input's pipeline channel as input idx.
//
// run's goroutine forwards the runtime's barrier requests to the reader
// the input is attached to; the reader sends barrier e once every input
// attached to it has forwarded its requests up to e, to each input that
// asked for e, at the same point of the subject. So every view reading a
// subject through one reader records the same position at an epoch.
type sourceReader struct {
	idx      uint16
	name     string // SQL stream name, for logs
	table    bool   // the subject is a table's changelog
	jsStream string
	subject  string
	decoder  messageDecoder
	broker   *broker.Broker
	rt       *Runtime
	log      *slog.Logger

	// pos is the position the input starts at (the view's committed one).
	pos storage.SourcePosition
	// pipe is the pipeline the input feeds, and watermark its scan's
	// watermark (nil: none); readers align by them
	// (watermark_alignment.go).
	pipe      *pipeline
	watermark *plan.Watermark

	barriers chan barrierRequest
	progress chan struct{} // unused: the subjectReader waits for fences
	out      chan<- pipelineMsg
	free     chan *Chunk // unused: the subjectReader keeps recycled chunks
	// quit is closed when the pipeline stops: sends to it are dropped.
	quit <-chan struct{}
	// failed receives the error of the reader the input is attached to.
	failed chan error
	// skippedTotal counts the malformed messages this view skipped (its
	// position's Skipped); the attached reader adds to it.
	skippedTotal atomic.Uint64
	// asked is the newest barrier the runtime asked of the input, and
	// delivered the newest its reader sent it (see ceiling).
	asked, delivered atomic.Uint64
	// askedNeed is the highest need (fence) of a barrier asked of the
	// input (under the runtime's mu; see ceiling).
	askedNeed uint64

	smu sync.Mutex
	// reqs are barrier requests forwarded and not yet sent; high is the
	// newest epoch forwarded; reader is the subjectReader the input is
	// attached to; gone is set once the input's pipeline stopped.
	reqs   []barrierRequest
	high   uint64
	reader *subjectReader
	gone   bool
	// first is the reader the input was attached to first: the pipeline
	// takes its messages before any other's (feedOrder).
	first *subjectReader
	// ceilings hold back messages of multi-subject commits until the
	// barriers asked before them arrive (commit_fence.go).
	ceilings []ceiling
	// cutter cuts the input's Debezium subject where no transaction is
	// open (envelope_txn.go); nil for other inputs.
	cutter *txnCutter
}

// firstReader returns the reader the input was attached to first.
func (s *sourceReader) firstReader() *subjectReader {
	s.smu.Lock()
	defer s.smu.Unlock()
	return s.first
}

// run attaches the input to a reader of its subject and forwards barrier
// requests to it until ctx ends or the reader fails.
func (s *sourceReader) run(ctx context.Context) error {
	s.quit = ctx.Done()
	s.failed = make(chan error, 1)
	s.skippedTotal.Store(s.pos.Skipped)
	s.rt.subjectReaders().join(s)
	defer s.leave()
	for {
		select {
		case <-ctx.Done():
			return nil
		case err := <-s.failed:
			return err
		case b := <-s.barriers:
			s.forward(b)
		}
	}
}

// forward hands barrier request b to the reader the input is attached to.
func (s *sourceReader) forward(b barrierRequest) {
	s.smu.Lock()
	s.reqs = append(s.reqs, b)
	s.high = max(s.high, b.epoch)
	r := s.reader
	s.smu.Unlock()
	if r != nil {
		r.wake()
	}
}

// leave detaches the input: its reader stops sending to it, and stops
// reading once no input is left.
func (s *sourceReader) leave() {
	s.smu.Lock()
	s.gone = true
	s.dropCeilings()
	r := s.reader
	s.smu.Unlock()
	if r != nil {
		r.wake()
	}
}

func (s *sourceReader) isGone() bool {
	s.smu.Lock()
	defer s.smu.Unlock()
	return s.gone
}

// takeRequest removes the request for epoch e, reporting whether there
// was one. Caller holds smu.
func (s *sourceReader) takeRequest(e uint64) (barrierRequest, bool) {
	for i, q := range s.reqs {
		if q.epoch == e {
			s.reqs = append(s.reqs[:i], s.reqs[i+1:]...)
			return q, true
		}
	}
	return barrierRequest{}, false
}

// send hands m to the pipeline; a stopped pipeline drops it. It reports
// false only when ctx ended.
func (s *sourceReader) send(ctx context.Context, m pipelineMsg) bool {
	select {
	case s.out <- m:
		return true
	case <-s.quit:
		m.release()
		return true
	case <-ctx.Done():
		m.release()
		return false
	}
}

// ConsumeOptions are the pull settings of every source reader: requests
// for up to 4 MiB of messages at a time rather than nats.go's default of
// 500 messages, with which a single reader waits on round trips between
// its pulls. A byte bound, unlike a message count, also bounds the buffer
// when messages are large (a table's changelog message may approach the
// NATS max_payload).
func ConsumeOptions() []jetstream.PullConsumeOpt {
	return []jetstream.PullConsumeOpt{jetstream.PullMaxBytes(4 << 20)}
}

// ackPosition reads the stream sequence and the consumer's pending count
// (messages after this one) from a JetStream message's reply subject
// without allocating:
//
//	$JS.ACK.<stream>.<consumer>.<delivered>.<sseq>.<cseq>.<tm>.<pending>
//	$JS.ACK.<domain>.<acc hash>.<stream>.<consumer>.<delivered>.<sseq>.<cseq>.<tm>.<pending>[.<token>]
//
// It reports false for anything else (the caller falls back to Metadata).
func ackPosition(reply string) (seq, pending uint64, ok bool) {
	if !strings.HasPrefix(reply, "$JS.ACK.") {
		return 0, 0, false
	}
	tokens := strings.Count(reply, ".") + 1
	var at int // index of <sseq>; <pending> is three tokens later
	switch {
	case tokens == 9:
		at = 5
	case tokens == 11 || tokens == 12:
		at = 7
	default:
		return 0, 0, false
	}
	rest := reply
	for range at {
		rest = rest[strings.IndexByte(rest, '.')+1:]
	}
	seq, ok = leadingNumber(rest)
	if !ok {
		return 0, 0, false
	}
	for range 3 {
		rest = rest[strings.IndexByte(rest, '.')+1:]
	}
	pending, ok = leadingNumber(rest)
	return seq, pending, ok
}

// leadingNumber parses the decimal number before the first '.' of s.
func leadingNumber(s string) (uint64, bool) {
	if i := strings.IndexByte(s, '.'); i >= 0 {
		s = s[:i]
	}
	n, err := strconv.ParseUint(s, 10, 64)
	return n, err == nil
}

// SubjectTarget returns the sequence a reader of subject must reach for
// targets (sequences by subject): a subject pattern's is the newest of
// the subjects it matches, all held by its JetStream stream.
func SubjectTarget(targets map[string]uint64, subject string) uint64 {
	if !broker.IsPattern(subject) {
		return targets[subject]
	}
	var want uint64
	for subj, seq := range targets {
		if seq > want && broker.SubjectCovers(subject, subj) {
			want = seq
		}
	}
	return want
}
