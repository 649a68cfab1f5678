package broker

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// ReadRange calls fn, in order, for every message on subject in stream
// whose sequence is in [from, to], a transaction's reference message
// standing for the data of its commit (none if it aborted). It fails if
// the stream no longer holds from (it was purged or dropped by the
// stream's limits).
func (b *Broker) ReadRange(ctx context.Context, stream, subject string, from, to uint64, fn func(seq uint64, data []byte) error) error {
	return b.ReadRangeInfo(ctx, stream, subject, from, to, func(m *MsgInfo, data []byte) error { return fn(m.Seq, data) })
}

// MsgInfo is what a message carries besides its data. The data of a
// committed transaction is read in place of its reference message
// (ParseTxnRef) and carries that message's: the subject written, its
// headers, and the time and sequence it was stored at.
type MsgInfo struct {
	Subject string
	Header  nats.Header
	Time    time.Time
	Seq     uint64
}

// ReadRangeInfo is ReadRange, giving fn each message's MsgInfo (valid
// during the call only).
func (b *Broker) ReadRangeInfo(ctx context.Context, stream, subject string, from, to uint64, fn func(m *MsgInfo, data []byte) error) error {
	if from > to {
		return nil
	}
	first, err := b.FirstSeq(ctx, stream)
	if err != nil {
		return err
	}
	if first > from {
		return fmt.Errorf("JetStream stream %s holds sequences from %d on, not %d", stream, first, from)
	}
	var info MsgInfo
	return b.scanFrom(ctx, stream, subject, from, func(m jetstream.Msg, seq uint64) (bool, error) {
		if seq > to {
			return false, nil
		}
		info = MsgInfo{Subject: m.Subject(), Header: m.Headers(), Seq: seq}
		if meta, err := m.Metadata(); err == nil {
			info.Time = meta.Timestamp
		}
		// The subject the message came on, not the filter: a pattern's
		// reference messages name the subject they were written to.
		if err := b.readLogical(ctx, m.Subject(), m.Headers(), m.Data(), func(data []byte) error { return fn(&info, data) }); err != nil {
			return false, err
		}
		return seq < to, nil
	})
}

// readLogical calls fn with the data of a message on subject or, for a
// reference message, with each message of its committed transaction's
// data.
func (b *Broker) readLogical(ctx context.Context, subject string, h nats.Header, data []byte, fn func(data []byte) error) error {
	ref, isRef, err := ParseTxnRef(h, data)
	if !isRef {
		return fn(data)
	}
	var bad *BadTxnRefError
	if errors.As(err, &bad) {
		return nil // stands for nothing: skipped, as a reader skips it
	}
	committed, err := b.TxnCommitted(ctx, subject, ref)
	if errors.As(err, &bad) {
		return nil
	}
	if err != nil || !committed {
		return err
	}
	return b.ReadTxnData(ctx, ref, fn)
}

// scanFrom calls fn, in order, for every message on filter in stream from
// sequence from on, with its stream sequence, until fn returns false or
// the messages there when it started (and any since) run out.
//
// It reads with one ephemeral pull consumer, each pull bounded by bytes
// (scanPullBudget) as well as messages: the server queues a pull's
// messages for the connection at once and drops a connection holding
// more than its max_pending (64 MiB by default) as a slow consumer, and
// nats.go keeps a pull's messages until they are read. A pull of 256
// changelog messages near max_payload each overran it, and the
// reconnect that followed failed every publish under way. Each pull asks
// only for messages known to be there (the consumer's pending count), so
// none waits for more to arrive.
func (b *Broker) scanFrom(ctx context.Context, stream, filter string, from uint64, fn func(m jetstream.Msg, seq uint64) (bool, error)) error {
	next := max(from, 1)
	for attempt := 0; ; attempt++ {
		resume, err := b.scanOnce(ctx, stream, filter, next, fn)
		if err == nil || !errors.Is(err, errScanGap) {
			return err
		}
		if attempt+1 >= scanGapAttempts {
			return fmt.Errorf("read %s of JetStream stream %s from sequence %d: %w", filter, stream, resume, err)
		}
		next = resume
	}
}

// scanPullMessages bounds the messages of one pull of scanFrom.
const scanPullMessages = 256

// scanPullBudget bounds the bytes of one pull of scanFrom: four of the
// largest messages the server takes, within 1 to 4 MiB (a sixteenth of
// the server's default max_pending), and never fewer than two of them.
func scanPullBudget(maxPayload int) int {
	return max(min(max(4*maxPayload, 1<<20), 4<<20), 2*maxPayload)
}

// scanPullWait is how long one pull may take. A pull that brings nothing
// in that time (the messages counted were removed since, or the server
// is slow) is followed by a look at the consumer's pending count.
const scanPullWait = 5 * time.Second

// errScanGap is a pull whose messages did not all arrive (the connection
// dropped some): the read goes on with a new consumer after the last
// message it took, at most scanGapAttempts times.
var errScanGap = errors.New("messages of the read were lost on the way")

const scanGapAttempts = 10

// scanOnce is one consumer's part of scanFrom: it returns the sequence to
// resume from when it ends with errScanGap.
func (b *Broker) scanOnce(ctx context.Context, stream, filter string, from uint64, fn func(m jetstream.Msg, seq uint64) (bool, error)) (uint64, error) {
	cons, err := b.JS.CreateConsumer(ctx, stream, jetstream.ConsumerConfig{
		FilterSubject:     filter,
		DeliverPolicy:     jetstream.DeliverByStartSequencePolicy,
		OptStartSeq:       from,
		AckPolicy:         jetstream.AckNonePolicy,
		MemoryStorage:     true,
		Replicas:          1,
		InactiveThreshold: time.Minute,
	})
	if err != nil {
		return from, err
	}
	defer b.dropConsumer(stream, cons)
	budget := scanPullBudget(int(b.MaxPayload()))
	pending := cons.CachedInfo().NumPending
	next, delivered := from, uint64(0) // next stream sequence to resume at; consumer sequence of the last message
	for pending > 0 {
		if err := ctx.Err(); err != nil {
			return next, err
		}
		batch, err := cons.Fetch(int(min(pending, scanPullMessages)), jetstream.FetchMaxBytes(budget), jetstream.FetchMaxWait(scanPullWait))
		if err != nil {
			return next, err
		}
		n := 0
		for m := range batch.Messages() {
			meta, err := m.Metadata()
			if err != nil {
				return next, err
			}
			if meta.Sequence.Consumer != delivered+1 {
				return next, errScanGap
			}
			n++
			delivered, next, pending = meta.Sequence.Consumer, meta.Sequence.Stream+1, meta.NumPending
			if more, err := fn(m, meta.Sequence.Stream); err != nil || !more {
				return next, err
			}
		}
		if err := batch.Error(); err != nil && !errors.Is(err, jetstream.ErrNoMessages) && !errors.Is(err, nats.ErrTimeout) {
			return next, err
		}
		if n == 0 {
			info, err := cons.Info(ctx)
			if err != nil {
				return next, err
			}
			if info.Delivered.Consumer != delivered {
				return next, errScanGap
			}
			pending = info.NumPending
		}
	}
	return next, nil
}

// dropConsumer deletes an ordered consumer made for one read when the read
// ends, rather than at its inactive threshold: until then it is one more
// consumer on the stream (each a Raft group on a cluster), and a test of
// consumer sharing would count it.
func (b *Broker) dropConsumer(stream string, cons jetstream.Consumer) {
	info := cons.CachedInfo()
	if info == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = b.JS.DeleteConsumer(ctx, stream, info.Name)
}
