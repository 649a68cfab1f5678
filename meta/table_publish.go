package meta

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"

	"streamdb/broker"
	"streamdb/catalog"
	"streamdb/exec"
	"streamdb/sqlerr"
)

// A commit that writes one subject and fits in one message publishes it
// as ONE message (a table's through its log's queue, or publishOne), so
// it lands whole or not at all: a message JetStream refuses (stream full)
// leaves nothing behind. Several rows for one stream are one atomic batch
// (publishRows). Any other commit (larger than a message, or writing
// several tables or streams) goes through the transaction stream
// (PublishTxn, broker/txn.go): whole or not at all too, and seen by every
// view in one epoch.

// Publish publishes one commit's parts, each subject's messages, the way
// that keeps it whole: one message as it is (publishOne), one stream's
// rows as an atomic batch (publishRows), anything else through the
// transaction stream (PublishTxn). Caller holds stateMu (shared) and the
// lock of every table it writes, with their queues idle.
func (t *Tables) Publish(parts []TxnPart) error {
	switch {
	case len(parts) == 0:
		return nil
	case len(parts) == 1 && len(parts[0].Msgs) == 1:
		return t.publishOne(parts[0])
	case len(parts) == 1 && parts[0].Log == nil && parts[0].Source == nil:
		return t.publishRows(parts[0])
	default:
		return t.PublishTxn(parts)
	}
}

// Commit commits to table d alone through its log: prepare runs under
// the log's lock, computing and checking the commit's changes against
// the table as it is now and encoding them as changelog messages (none:
// nothing to write). One message is queued for group commit and the
// lock let go before it is published; more are published through the
// transaction stream after what is queued, holding the lock so that
// nothing is computed on top of them before they land. Caller holds
// stateMu (shared).
func (t *Tables) Commit(d *catalog.Descriptor, prepare func(log *TableLog) ([]exec.Change, [][]byte, error)) error {
	log := t.Log(d.ID)
	log.Lock()
	changes, msgs, err := prepare(log)
	if err != nil || len(changes) == 0 {
		log.Unlock()
		return err
	}
	if len(msgs) > 1 {
		defer log.Unlock()
		log.WaitIdle()
		return t.PublishTxn([]TxnPart{{D: d, Msgs: msgs, Log: log, Changes: changes}})
	}
	en := log.Queue(changes, msgs[0])
	log.Unlock()
	return log.Await(d, en)
}

// publishRows publishes the rows of a write to one stream as events, one
// message each, as producers publish them, in one epoch, and whole or not
// at all: as one JetStream atomic batch (broker.PublishAtomic), so a row
// the stream's limits refuse leaves none of them stored. A write the batch
// cannot carry (more rows than broker.MaxAtomicBatch, or a JetStream
// stream that does not allow atomic publish: one streamdb bound to rather
// than created) goes through the transaction stream, whole too; its
// subject then holds one reference message, whose rows streamdb's readers
// take in its place.
func (t *Tables) publishRows(p TxnPart) error {
	err := t.publishBatch(p)
	switch {
	case errors.Is(err, broker.ErrAtomicDisabled):
		// A JetStream stream that does not allow atomic publish belongs
		// to others who read rows from it: its rows go as they always
		// did, one message each, not as a transaction reference.
		return t.publishEach(p)
	case errors.Is(err, broker.ErrAtomicUnavailable):
		return t.PublishTxn([]TxnPart{p})
	}
	return err
}

// publishEach publishes a stream's rows one message each, as producers
// publish them. They are not one atomic unit: if JetStream refuses a
// later row (the stream's limits), the rows before it stay, and the
// error names how many landed.
func (t *Tables) publishEach(p TxnPart) error {
	var landed int
	var notDurable *broker.NotDurableError
	var fenced error
	err := t.cfg.Runtime.PublishFenced([]string{p.D.Subject}, func() (map[string]uint64, error) {
		if fenced = t.checkFence(); fenced != nil {
			return nil, fenced
		}
		ctx, cancel := context.WithTimeout(context.Background(), PublishTimeout)
		defer cancel()
		futures := make([]jetstream.PubAckFuture, 0, len(p.Msgs))
		var err error
		for _, m := range p.Msgs {
			f, perr := t.cfg.Broker.JS.PublishAsync(p.D.Subject, m, jetstream.WithExpectStream(p.D.JSStream))
			if perr != nil {
				err = perr
				break
			}
			futures = append(futures, f)
		}
		var last uint64
		for _, f := range futures {
			ack, perr := AwaitAck(ctx, f)
			if nd := (*broker.NotDurableError)(nil); errors.As(perr, &nd) {
				ack, perr, notDurable = nd.Ack, nil, nd
			}
			if perr != nil {
				err = errors.Join(err, perr)
				continue
			}
			landed++
			last = max(last, ack.Sequence)
		}
		if last == 0 {
			return nil, err
		}
		t.cfg.Acknowledged(p.D.Subject, last)
		return map[string]uint64{p.D.Subject: last}, err
	})
	if fenced != nil {
		return fenced // nothing was published
	}
	if err != nil {
		if landed > 0 {
			return sqlerr.New(sqlerr.TransactionResolutionUnknown, "only %d of the %d rows for stream %q were published: %v", landed, len(p.Msgs), p.D.Name, err).
				WithHint("The stream's JetStream stream does not allow atomic publish, so its rows are published one by one; its limits refused the rest.")
		}
		if se := t.cfg.Broker.StreamWriteError(p.D.JSStream, "could not write"); se != nil {
			return se
		}
		return t.publishFailure(err, fmt.Sprintf("could not write to stream %q", p.D.Name))
	}
	if notDurable != nil {
		return StoredNotDurable("the write", notDurable)
	}
	return nil
}

// publishBatch publishes a stream's rows as one atomic batch, or answers
// broker.ErrAtomicUnavailable having published nothing.
func (t *Tables) publishBatch(p TxnPart) error {
	if len(p.Msgs) > broker.MaxAtomicBatch {
		return broker.ErrAtomicUnavailable
	}
	var notDurable *broker.NotDurableError
	var fenced error
	err := t.cfg.Runtime.PublishFenced([]string{p.D.Subject}, func() (map[string]uint64, error) {
		if fenced = t.checkFence(); fenced != nil {
			return nil, fenced
		}
		ctx, cancel := context.WithTimeout(context.Background(), PublishTimeout)
		defer cancel()
		ack, err := t.cfg.Broker.PublishAtomic(ctx, p.D.JSStream, p.D.Subject, p.Msgs)
		if nd := (*broker.NotDurableError)(nil); errors.As(err, &nd) {
			ack, err, notDurable = nd.Ack, nil, nd
		}
		if err != nil {
			return nil, err
		}
		t.cfg.Acknowledged(p.D.Subject, ack.Sequence)
		return map[string]uint64{p.D.Subject: ack.Sequence}, nil
	})
	switch {
	case fenced != nil:
		return fenced // nothing was published
	case errors.Is(err, broker.ErrAtomicUnavailable):
		return err
	case err != nil:
		if se := t.cfg.Broker.StreamWriteError(p.D.JSStream, "could not write"); se != nil {
			return se
		}
		return t.publishFailure(err, fmt.Sprintf("could not write %d rows to stream %q", len(p.Msgs), p.D.Name))
	case notDurable != nil:
		return StoredNotDurable("the write", notDurable)
	}
	return nil
}

// publishOne publishes a commit of one message to one subject outside a
// table's queue. Caller holds the table's log mu with its queue idle.
func (t *Tables) publishOne(p TxnPart) error {
	if err := t.checkFence(); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), PublishTimeout)
	defer cancel()
	ack, err := t.cfg.Broker.JS.Publish(ctx, p.D.Subject, p.Msgs[0], jetstream.WithExpectStream(p.D.JSStream))
	var notDurable *broker.NotDurableError
	if errors.As(err, &notDurable) {
		ack = notDurable.Ack
	} else if err != nil {
		if p.Log != nil {
			p.Log.MarkUnsure()
		}
		if se := t.cfg.Broker.StreamWriteError(p.D.JSStream, "could not commit"); se != nil {
			return se
		}
		return t.publishFailure(err, "could not commit")
	}
	t.cfg.Acknowledged(p.D.Subject, ack.Sequence)
	if p.Log != nil {
		p.Log.added(ack.Sequence, p.Changes)
	}
	if notDurable != nil {
		return StoredNotDurable("the commit", notDurable)
	}
	return nil
}
