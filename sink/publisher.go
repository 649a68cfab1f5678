package sink

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"streamdb/metrics"
	"streamdb/storage"
	"streamdb/types"
)

// roundInterval is how often the Publisher looks for entries to publish
// when nothing wakes it.
const roundInterval = 50 * time.Millisecond

// ackTimeout bounds the wait for JetStream's acknowledgements of one
// entry's messages; on timeout the sink resumes from what JetStream holds.
const ackTimeout = 10 * time.Second

// Publisher publishes every sink's outbox. One goroutine does all the
// work, sinks one after another.
type Publisher struct {
	store   *storage.Store
	js      jetstream.JetStream
	durable func() uint64
	log     *slog.Logger
	// startEpoch is the store's epoch when the Publisher was made: the
	// state this process started from.
	startEpoch uint64

	kick   chan struct{}
	cancel context.CancelFunc
	done   chan struct{}

	mu     sync.Mutex
	states map[string]*state // by SinkDescriptor.UID
}

// state is what the Publisher knows of one sink.
type state struct {
	resumed bool     // last holds what JetStream holds
	last    position // the newest message published (valid if has)
	has     bool
	sent    uint64 // messages published by this process
	err     string // the last failure, until a publish succeeds
	name    string // the sink's name, for its metrics
	// checked: the subject was compared with the state this process
	// started from; stuck says why the sink must not publish, if so.
	checked bool
	stuck   string
	// partial, when set, holds the indexes of the messages of entry
	// partialAt that JetStream acknowledged before a failure.
	partial   map[int]bool
	partialAt position
	// retryAt, after a failure, is when to try again; backoff doubles
	// with each failure in a row, up to maxBackoff.
	retryAt time.Time
	backoff time.Duration
	// enc encodes the rows of a protobuf or avro sink (nil until its
	// first entry); only the publishing goroutine uses it. The view's
	// columns do not change while it has sinks.
	enc RowEncoder
}

// maxBackoff bounds the wait between attempts of a failing sink.
const maxBackoff = 5 * time.Second

// toPublish returns the indexes of entry e's n messages still to send:
// those not acknowledged in an attempt that failed part way, or else
// those after the newest message known published.
func (st *state) toPublish(e entry, n int) []int {
	var todo []int
	if st.partial != nil && st.partialAt.epoch == e.epoch && st.partialAt.part == e.part {
		for i := range n {
			if !st.partial[i] {
				todo = append(todo, i)
			}
		}
		return todo
	}
	start := 0
	if st.has && st.last.epoch == e.epoch && st.last.part == e.part {
		start = st.last.index + 1
	}
	for i := start; i < n; i++ {
		todo = append(todo, i)
	}
	return todo
}

// noteAcked records the messages of entry e acknowledged before a
// failure.
func (st *state) noteAcked(e entry, acked []int) {
	if st.partial == nil || st.partialAt.epoch != e.epoch || st.partialAt.part != e.part {
		if st.has && st.last.epoch == e.epoch && st.last.part == e.part {
			// Resumed part way: the messages up to last are stored.
			st.partial = map[int]bool{}
			for i := 0; i <= st.last.index; i++ {
				st.partial[i] = true
			}
		} else {
			st.partial = map[int]bool{}
		}
		st.partialAt = position{epoch: e.epoch, part: e.part}
	}
	for _, i := range acked {
		st.partial[i] = true
	}
}

// Status is a sink's publishing progress, for SHOW SINKS.
type Status struct {
	// Epoch is the epoch of the newest message published (0 if none is
	// known yet).
	Epoch uint64
	// Sent counts the messages this server process published.
	Sent uint64
	// Error is the last failure to publish, "" once publishing works.
	Error string
	// Stopped: the sink will not publish again (Error says why).
	Stopped bool
}

// NewPublisher returns a publisher of store's sinks to js that publishes
// epochs up to durable().
func NewPublisher(store *storage.Store, js jetstream.JetStream, durable func() uint64, log *slog.Logger) *Publisher {
	start, _ := store.Epoch()
	return &Publisher{store: store, js: js, durable: durable, log: log, startEpoch: start,
		kick: make(chan struct{}, 1), states: map[string]*state{}}
}

// Start begins publishing.
func (p *Publisher) Start() {
	ctx, cancel := context.WithCancel(context.Background())
	p.cancel, p.done = cancel, make(chan struct{})
	go func() {
		defer close(p.done)
		t := time.NewTicker(roundInterval)
		defer t.Stop()
		for {
			p.round(ctx)
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			case <-p.kick:
			}
		}
	}()
}

// Stop ends publishing and waits for the goroutine; entries not yet
// published stay in the outbox for the next start.
func (p *Publisher) Stop() {
	if p.cancel == nil {
		return
	}
	p.cancel()
	<-p.done
}

// Kick asks for a round now (a checkpoint completed).
func (p *Publisher) Kick() {
	select {
	case p.kick <- struct{}{}:
	default:
	}
}

// Status reports sink d's progress.
func (p *Publisher) Status(d *storage.SinkDescriptor) Status {
	p.mu.Lock()
	defer p.mu.Unlock()
	st := p.states[d.UID()]
	if st == nil {
		return Status{}
	}
	out := Status{Sent: st.sent, Error: st.err, Stopped: st.stuck != ""}
	if st.has {
		out.Epoch = st.last.epoch
	}
	return out
}

func (p *Publisher) stateOf(d *storage.SinkDescriptor) *state {
	p.mu.Lock()
	defer p.mu.Unlock()
	st := p.states[d.UID()]
	if st == nil {
		st = &state{name: d.Name}
		p.states[d.UID()] = st
	}
	return st
}

// round publishes what every sink may publish now, as of one snapshot
// of the store, and deletes the entries done and those of dropped sinks.
func (p *Publisher) round(ctx context.Context) {
	snap := p.store.DB().NewSnapshot()
	defer snap.Close()
	sinks, err := storage.Sinks(snap)
	if err != nil {
		p.log.Error("sinks: read catalog", "err", err)
		return
	}
	gate := p.durable()
	del := p.store.NewBatch()
	defer del.Close()
	known := map[uint32]bool{}
	for _, d := range sinks {
		known[d.ID] = true
		v, err := storage.DescriptorNamed(snap, d.View)
		if err != nil {
			p.log.Error("sinks: read catalog", "err", err)
			return
		}
		if v == nil || v.ID != d.ViewID {
			continue
		}
		cols, err := v.Schema()
		if err != nil {
			continue
		}
		p.publishSink(ctx, snap, d, cols, gate, del)
		if ctx.Err() != nil {
			return
		}
	}
	p.forgetDropped(sinks)
	// Entries of dropped sinks (an epoch in flight at DROP SINK wrote one).
	var orphans []uint32
	err = storage.ScanPrefix(snap, storage.AllOutboxes(), func(k, _ []byte) error {
		id, _, _, _ := storage.ParseOutboxKey(k)
		if !known[id] && (len(orphans) == 0 || orphans[len(orphans)-1] != id) {
			orphans = append(orphans, id)
		}
		return nil
	})
	if err == nil {
		for _, id := range orphans {
			pre := storage.SinkPrefix(id)
			del.DeleteRange(pre, storage.PrefixEnd(pre), nil)
		}
	}
	if !del.Empty() {
		if err := p.store.Commit(del, false); err != nil {
			p.log.Error("sinks: delete published outbox entries", "err", err)
		}
	}
}

// forgetDropped drops what the Publisher holds of sinks no longer in
// the catalog, and their metrics.
func (p *Publisher) forgetDropped(sinks []*storage.SinkDescriptor) {
	live := map[string]bool{}
	for _, d := range sinks {
		live[d.UID()] = true
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for uid, st := range p.states {
		if !live[uid] {
			delete(p.states, uid)
			metrics.ForgetSink(st.name)
		}
	}
}

// publishSink publishes sink d's entries up to epoch gate.
func (p *Publisher) publishSink(ctx context.Context, snap *pebble.Snapshot, d *storage.SinkDescriptor, cols []types.Column, gate uint64, del *pebble.Batch) {
	st := p.stateOf(d)
	fail := func(what string, err error) {
		p.mu.Lock()
		msg := fmt.Sprintf("%s: %v", what, err)
		if st.err != msg {
			p.log.Warn("sink: publishing stopped, retrying", "sink", d.Name, "subject", d.Subject, "err", msg)
		}
		st.err, st.resumed = msg, false
		st.backoff = min(max(2*st.backoff, roundInterval), maxBackoff)
		st.retryAt = time.Now().Add(st.backoff)
		p.mu.Unlock()
	}
	if time.Now().Before(st.retryAt) {
		return
	}
	var entries []entry
	err := storage.ScanPrefix(snap, storage.OutboxPrefix(d.ID), func(k, v []byte) error {
		_, epoch, part, ok := storage.ParseOutboxKey(k)
		if ok {
			entries = append(entries, entry{key: bytes.Clone(k), epoch: epoch, part: part, value: bytes.Clone(v)})
		}
		return nil
	})
	if err != nil {
		fail("read outbox", err)
		return
	}
	pending := len(entries)
	defer func() { metrics.SinkPendingEpochs.WithLabelValues(d.Name).Set(float64(pending)) }()
	if len(entries) == 0 || entries[0].epoch > gate {
		return
	}
	if !st.resumed {
		last, has, stored, err := p.lastPublished(ctx, d)
		if err != nil {
			fail("read the last message on the subject", err)
			return
		}
		p.mu.Lock()
		st.last, st.has, st.resumed = last, has, true
		if has {
			// The last entry may have holes (a message that failed before
			// later ones were stored, then a crash): the retry fills them.
			st.partial, st.partialAt = stored, position{epoch: last.epoch, part: last.part}
		}
		if !st.checked && has && last.epoch > p.startEpoch {
			// The state was restored to a point before changes the
			// consumers have seen (--restore-from an older checkpoint, or
			// a recovery that skipped a damaged newer one): the epochs
			// after the point are cut anew, and publishing them would
			// skip or repeat changes.
			st.stuck = fmt.Sprintf("the subject holds epoch %d, but the state was restored to epoch %d; DROP SINK %s and CREATE it again (its consumers start over from a new snapshot)", last.epoch, p.startEpoch, d.Name)
			p.log.Error("sink: stopped", "sink", d.Name, "reason", st.stuck)
		}
		st.checked = true
		p.mu.Unlock()
	}
	if st.stuck != "" {
		p.mu.Lock()
		st.err = st.stuck
		p.mu.Unlock()
		return
	}
	for i, e := range entries {
		if e.epoch > gate {
			break
		}
		if st.has && st.last.after(e.epoch, e.part) {
			del.Delete(e.key, nil) // published before a restart or restore
			pending--
			continue
		}
		if st.enc == nil && (d.Format == FormatProtobuf || d.Format == FormatAvro) {
			if st.enc, err = NewRowEncoder(d.Format, d.Schema, d.Message, cols); err != nil {
				fail("encode", err)
				return
			}
		}
		msgs, ops, err := messages(snap, d, cols, st.enc, entries, i)
		if err != nil {
			fail("encode", err)
			return
		}
		todo := st.toPublish(e, len(msgs))
		acked, err := p.publish(ctx, d, e, msgs, ops, todo)
		sent := len(acked)
		if err != nil {
			// Messages after a failed one may be stored: remember
			// which, so that the retry fills the holes rather than
			// resuming after the newest message on the subject.
			p.mu.Lock()
			st.noteAcked(e, acked)
			st.sent += uint64(sent)
			p.mu.Unlock()
			metrics.SinkMessages.WithLabelValues(d.Name).Add(float64(sent))
			fail("publish", err)
			return
		}
		p.mu.Lock()
		if len(msgs) > 0 {
			st.last, st.has = position{epoch: e.epoch, part: e.part, index: len(msgs) - 1}, true
		}
		st.partial, st.backoff = nil, 0
		st.sent += uint64(sent)
		st.err = ""
		p.mu.Unlock()
		metrics.SinkMessages.WithLabelValues(d.Name).Add(float64(sent))
		if st.has {
			metrics.SinkPublishedEpoch.WithLabelValues(d.Name).Set(float64(st.last.epoch))
		}
		del.Delete(e.key, nil)
		pending--
	}
}

// publish sends msgs[i] (with OpHeader ops[i] when ops is not nil) for
// each i in todo, all at once, and waits for JetStream's answer to each;
// it returns the indexes acknowledged, and the first failure.
func (p *Publisher) publish(ctx context.Context, d *storage.SinkDescriptor, e entry, msgs [][]byte, ops []string, todo []int) ([]int, error) {
	futs := make([]jetstream.PubAckFuture, 0, len(todo))
	epoch := strconv.FormatUint(e.epoch, 10)
	var first error
	for _, i := range todo {
		m := nats.NewMsg(d.Subject)
		m.Data = msgs[i]
		m.Header.Set(jetstream.MsgIDHeader, msgID(d.UID(), e.epoch, e.part, i))
		m.Header.Set(EpochHeader, epoch)
		if ops != nil {
			m.Header.Set(OpHeader, ops[i])
		}
		f, err := p.js.PublishMsgAsync(m, jetstream.WithExpectStream(d.JSStream))
		if err != nil {
			first = err
			break
		}
		futs = append(futs, f)
	}
	var acked []int
	timeout := time.NewTimer(ackTimeout)
	defer timeout.Stop()
	for k, f := range futs {
		select {
		case <-f.Ok():
			acked = append(acked, todo[k])
		case err := <-f.Err():
			first = cmp.Or(first, err)
		case <-timeout.C:
			return acked, errors.New("no acknowledgement from JetStream within " + ackTimeout.String())
		case <-ctx.Done():
			return acked, ctx.Err()
		}
	}
	return acked, first
}

// lastPublished reads the newest message on d's subject, and which
// messages of its entry the subject holds (stored, by index); has is
// false when the subject holds none of d's messages.
func (p *Publisher) lastPublished(parent context.Context, d *storage.SinkDescriptor) (last position, has bool, stored map[int]bool, err error) {
	ctx, cancel := context.WithTimeout(parent, ackTimeout)
	defer cancel()
	s, err := p.js.Stream(ctx, d.JSStream)
	if err != nil {
		return position{}, false, nil, err
	}
	m, err := s.GetLastMsgForSubject(ctx, d.Subject)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return position{}, false, nil, nil
	}
	if err != nil {
		return position{}, false, nil, err
	}
	last, has = parseMsgID(d.UID(), m.Header.Get(jetstream.MsgIDHeader))
	if !has {
		return position{}, false, nil, nil
	}
	// Reading back an entry takes a request per message: a timeout of its
	// own, longer than one answer's.
	scan, cancelScan := context.WithTimeout(parent, entryScanTimeout)
	defer cancelScan()
	stored, err = storedOfEntry(scan, s, d, last, m.Sequence)
	return last, has, stored, err
}

// entryScanTimeout bounds reading back the messages of the last entry.
const entryScanTimeout = 2 * time.Minute

// storedOfEntry lists the messages of entry (last.epoch, last.part) that
// the stream holds, reading back from sequence seq (the entry's newest
// message) to the first message of an earlier entry of the sink: an
// entry's messages all follow the entries before it, which were acknowledged
// whole before it was published.
func storedOfEntry(ctx context.Context, s jetstream.Stream, d *storage.SinkDescriptor, last position, seq uint64) (map[int]bool, error) {
	stored := map[int]bool{last.index: true}
	for seq > 1 {
		seq--
		m, err := s.GetMsg(ctx, seq)
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			continue // deleted or purged
		}
		if err != nil {
			return nil, err
		}
		if m.Subject != d.Subject {
			continue
		}
		pos, ok := parseMsgID(d.UID(), m.Header.Get(jetstream.MsgIDHeader))
		if !ok {
			continue // not this sink's
		}
		if pos.epoch != last.epoch || pos.part != last.part {
			break
		}
		stored[pos.index] = true
	}
	return stored, nil
}
