package exec

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"streamdb/plan"
)

// Debezium transactions in one epoch. With provide.transaction.metadata
// on, Debezium Server publishes a BEGIN and an END event to the
// transaction topic around each transaction's change events, all in
// commit order and one at a time, so when the change subjects and the
// transaction subject are in one JetStream stream its sequences order
// them all: a transaction is the messages between its BEGIN and its END.
// A stream with envelope = 'debezium' and transaction_subject = '...'
// (OptTransactionSubject) is cut at one point of that order by every
// barrier: a txnCutter per JetStream stream and transaction subject
// keeps the cut, the newest sequence that falls inside no transaction
// (the stream's last sequence, or the one before an open transaction's
// BEGIN); a barrier carries the cut it found when injected, and every
// reader of such a stream sends it having taken every message of its
// subject up to the cut (reachCut) and none after (a ceiling at the cut,
// commit_fence.go); between barriers a reader takes no message past the
// cutter's current cut (belowCut), as a barrier asked later may carry
// that cut. All the streams of one Debezium server are cut at
// the same sequence by the same barrier, so every view sees a
// transaction's changes, over any number of tables, in one epoch.
//
// A transaction left open for txnOpenLimit (Debezium stopped between its
// BEGIN and END, say) stops holding input back: the cut moves past it,
// once, with a warning in the log; its changes may then split.

// OptTransactionSubject names the subject of Debezium's transaction
// metadata events for a stream with envelope = 'debezium'.
const OptTransactionSubject = "transaction_subject"

// txnOpenLimit is how long an open transaction holds the cut back.
const txnOpenLimit = time.Minute

// txnCutPoll is how often a cutter looks for a new cut, and a reader
// waiting for one looks again.
const txnCutPoll = 5 * time.Millisecond

// txnCutter keeps the cut of one JetStream stream whose subject subject
// holds Debezium's transaction events.
type txnCutter struct {
	rt       *Runtime
	jsStream string
	subject  string
	cut      atomic.Uint64
	// follow: the cut is a follower's (epoch_follow.go), set by the
	// runtime per subject; no goroutine moves it.
	follow bool

	// Used by run's goroutine only: the open transaction's BEGIN and
	// when it was first seen open; the stream's last sequence when the
	// cut was last looked for.
	openSeq   uint64
	openSince time.Time
	seen      uint64
}

// txnCutterFor returns the cutter of subject in JetStream stream
// jsStream, starting it on first use; it runs as long as the runtime.
func (rt *Runtime) txnCutterFor(jsStream, subject string) *txnCutter {
	key := jsStream + "\x00" + subject
	if c, ok := rt.txnCutters.Load(key); ok {
		return c.(*txnCutter)
	}
	c := &txnCutter{rt: rt, jsStream: jsStream, subject: subject}
	if prev, loaded := rt.txnCutters.LoadOrStore(key, c); loaded {
		return prev.(*txnCutter)
	}
	go c.run(rt.ctx)
	return c
}

// setTxnCutter gives the source the scan reads the cutter of its
// stream's transaction subject, when it has one.
func (b *builder) setTxnCutter(s *plan.Scan, src *sourceReader) {
	subj := s.Object.Options[OptTransactionSubject]
	if subj == "" || b.rt.follower != nil {
		return // a follower's cuts fall between transactions already
	}
	src.cutter = b.rt.txnCutterFor(src.jsStream, subj)
}

func (c *txnCutter) run(ctx context.Context) {
	var stream jetstream.Stream
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(txnCutPoll):
		}
		if stream == nil {
			s, err := c.rt.broker.JS.Stream(ctx, c.jsStream)
			if err != nil {
				continue
			}
			stream = s
		}
		if err := c.advance(ctx, stream); err != nil && ctx.Err() == nil {
			stream = nil // looked up again: the stream may have been re-created
		}
	}
}

// advance moves the cut to the newest sequence inside no transaction.
// The last transaction event is read before and after the stream's last
// sequence: if it is the same both times, no transaction event came in
// between, so whether a transaction is open at that sequence is what
// that event says.
func (c *txnCutter) advance(ctx context.Context, stream jetstream.Stream) error {
	if c.openSeq == 0 {
		// Nothing stored since the last look: the cut stands (an open
		// transaction is looked at again for its time limit).
		info, err := stream.Info(ctx)
		if err != nil {
			return err
		}
		if info.State.LastSeq == c.seen {
			return nil
		}
	}
	seq1, begin, err := c.lastEvent(ctx, stream)
	if err != nil {
		return err
	}
	info, err := stream.Info(ctx)
	if err != nil {
		return err
	}
	last := info.State.LastSeq
	seq2, _, err := c.lastEvent(ctx, stream)
	if err != nil {
		return err
	}
	if seq1 != seq2 {
		return nil // a transaction event came in between: look again
	}
	c.seen = last
	cut := last
	if !begin {
		c.openSeq = 0
	} else {
		if c.openSeq != seq1 {
			c.openSeq, c.openSince = seq1, time.Now()
		}
		switch open := time.Since(c.openSince); {
		case open < txnOpenLimit:
			cut = seq1 - 1
		case c.openSince != (time.Time{}):
			c.rt.log.Warn("a Debezium transaction has been open too long: its changes are no longer held back and may be seen in parts",
				"subject", c.subject, "begin_seq", seq1, "open", open.Round(time.Second), "limit", txnOpenLimit)
			c.openSince = time.Time{}
		}
	}
	for {
		old := c.cut.Load()
		if cut <= old || c.cut.CompareAndSwap(old, cut) {
			return nil
		}
	}
}

// lastEvent returns the sequence of the last transaction event and
// whether it is a BEGIN (0, false: none).
func (c *txnCutter) lastEvent(ctx context.Context, stream jetstream.Stream) (uint64, bool, error) {
	m, err := stream.GetLastMsgForSubject(ctx, c.subject)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	var ev struct {
		Status  string `json:"status"`
		Payload *struct {
			Status string `json:"status"`
		} `json:"payload"`
	}
	if json.Unmarshal(m.Data, &ev) == nil && ev.Payload != nil {
		ev.Status = ev.Payload.Status
	}
	return m.Sequence, ev.Status == "BEGIN", nil
}

// belowCut waits until the message at seq is at or below the cut of the
// reader's Debezium stream: a message of a transaction whose END is not
// stored yet waits, so that no barrier can fall after it and before the
// rest of the transaction. It reports false if ctx ended.
func (r *subjectReader) belowCut(seq uint64) bool {
	if r.cutter == nil || seq <= r.cutter.cut.Load() {
		return true
	}
	r.heldAt.Store(seq)
	defer r.heldAt.Store(0)
	for seq > r.cutter.cut.Load() {
		select {
		case <-r.ctx.Done():
			return false
		case <-time.After(txnCutPoll):
		}
	}
	return true
}

// reachCut waits until the reader has taken every message of its subject
// up to sequence cut: it has taken cut or a later message, holds a later
// one (at the barrier's ceiling, or past the cutter's cut), or the
// subject has no message after the last it took. A paused reader does
// not wait; a merge limit below the cut is given up, as in reach. It
// reports false if ctx ended.
func (r *subjectReader) reachCut(cut uint64) bool {
	if cut == 0 {
		return true
	}
	r.waiting.Store(true)
	defer r.waiting.Store(false)
	r.unhold()
	for {
		r.cmu.Lock()
		pos := r.pos
		limited := r.limited && r.limit < cut
		r.cmu.Unlock()
		if limited {
			r.grp.abandon(r) // as reach does for a fence past a merge limit
		}
		if pos >= cut || r.heldAt.Load() > cut {
			return true
		}
		if r.rt.Paused() && (r.cutter == nil || !r.cutter.follow) {
			return true // a follower's epoch waits for its cut, paused or not
		}
		if r.subjectEndsBefore(pos, cut) {
			return true
		}
		select {
		case <-r.ctx.Done():
			return false
		case <-r.progress:
		case <-time.After(txnCutPoll):
		}
	}
}

// subjectEndsBefore reports whether the reader's subject has no message
// after pos up to cut: its last message is at or below pos. For a
// follower the stream must also hold cut already: a cut names a message
// that exists, which a NATS server behind its cluster may not show yet.
// The stream's end is read first: the subject's last message, read
// after, then covers every message up to that end, so up to cut.
func (r *subjectReader) subjectEndsBefore(pos, cut uint64) bool {
	if r.cutter != nil && r.cutter.follow {
		streamLast, err := r.rt.broker.LastSeq(r.ctx, r.jsStream)
		if err != nil || streamLast < cut {
			return false
		}
	}
	last, err := r.rt.broker.LastSeqForSubject(r.ctx, r.jsStream, r.subject)
	return err == nil && last <= pos
}
