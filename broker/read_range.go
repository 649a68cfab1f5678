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
// the messages run out.
func (b *Broker) scanFrom(ctx context.Context, stream, filter string, from uint64, fn func(m jetstream.Msg, seq uint64) (bool, error)) error {
	cons, err := b.JS.OrderedConsumer(ctx, stream, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{filter},
		DeliverPolicy:  jetstream.DeliverByStartSequencePolicy,
		OptStartSeq:    max(from, 1),
	})
	if err != nil {
		return err
	}
	defer b.dropConsumer(stream, cons)
	for {
		batch, err := cons.FetchNoWait(256)
		if err != nil {
			return err
		}
		n := 0
		for m := range batch.Messages() {
			n++
			meta, err := m.Metadata()
			if err != nil {
				return err
			}
			if more, err := fn(m, meta.Sequence.Stream); err != nil || !more {
				return err
			}
		}
		if err := batch.Error(); err != nil && !errors.Is(err, jetstream.ErrNoMessages) {
			return err
		}
		if n == 0 {
			return nil // past the subject's last message
		}
	}
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
