package meta

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/nats-io/nats.go/jetstream"

	"streamdb/broker"
	"streamdb/catalog"
	"streamdb/exec"
	"streamdb/faults"
	"streamdb/sqlerr"
	"streamdb/types"
)

// A bulk commit (BulkTxn: an autocommit COPY or INSERT ... SELECT into a
// table, which the frontend streams) is published as a transaction over
// the transaction stream (broker/txn.go) whose rows come a batch at a
// time: first its intent, which asks for a decision (TxnIntent.Decide: a
// transaction open for as long as its client sends rows must not be
// taken for ended and removed, and a crash before the decision leaves it
// to the next start to abort), then its data, a window of publishes in
// flight at a time, then its reference on the table's subject and its
// decision, the commit point. Nothing of it is visible before the
// decision, so a failure or a crash before it leaves nothing, and the
// reader of the table's subject takes the whole commit at the reference,
// in one epoch. The caller holds the table's log lock from before the
// first row to after Commit: no commit is computed on top of this one
// until the table has applied it, which is why the log never holds its
// changes.

// bulkWindow is the most data publishes awaited together, and
// bulkWindowBytes the most bytes they hold. What is in flight when the
// connection to NATS drops fails (the client buffers nothing while it
// reconnects: broker.Connect), and so does the commit: nothing refers to
// its data yet. The bytes are bounded so that the writer's memory does
// not grow with the row size.
const (
	bulkWindow      = 64
	bulkWindowBytes = TxnWindowBytes
)

// BulkTxn is one streaming commit to a table.
type BulkTxn struct {
	t       *Tables
	d       *catalog.Descriptor
	log     *TableLog
	id      string // the transaction's id
	members []types.Column
	limit   int // of one message's bytes (Tables.ChangelogLimit)

	// refs are the data's sequences in the transaction stream; inflight
	// the publishes not acknowledged yet, oldest first, of inflightBytes
	// in all.
	refs          [][2]uint64
	inflight      []bulkPublish
	inflightBytes int
}

// bulkPublish is a data publish not acknowledged yet.
type bulkPublish struct {
	f    jetstream.PubAckFuture
	size int
}

// BeginBulk publishes the intent of a streaming commit to table d, whose
// log the caller holds locked; members are the columns its changelog
// encodes (the table's member columns).
func (t *Tables) BeginBulk(d *catalog.Descriptor, log *TableLog, members []types.Column) (*BulkTxn, error) {
	b := &BulkTxn{t: t, d: d, log: log, id: NewTxnID(), members: members, limit: t.ChangelogLimit()}
	intent := broker.TxnIntent{Subjects: []broker.TxnSubject{{Stream: d.JSStream, Subject: d.Subject}}, Decide: true}
	body, _ := json.Marshal(intent)
	ctx, cancel := context.WithTimeout(context.Background(), PublishTimeout)
	defer cancel()
	if _, err := t.cfg.Broker.JS.Publish(ctx, broker.TxnIntentSubject(b.id), body, jetstream.WithExpectStream(broker.TxnStream)); err != nil {
		return nil, b.failed(err)
	}
	return b, nil
}

func (b *BulkTxn) failed(err error) error {
	if se := b.t.cfg.Broker.StreamWriteError(broker.TxnStream, "could not commit"); se != nil {
		return se
	}
	return b.t.publishFailure(err, "could not commit")
}

// Abort decides the transaction aborted, as a failed commit over several
// subjects is (an undecided one would hold up the removal of later
// transactions until the next start), and removes its records.
func (b *BulkTxn) Abort() {
	if committed, err := b.t.DecideTxn(b.id, false); err != nil || committed {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), PublishTimeout)
	defer cancel()
	if err := b.t.cfg.Broker.RemoveTxn(ctx, b.id); err != nil {
		b.t.cfg.Log.Warn("remove an aborted bulk commit's transaction", "txn", b.id, "err", err)
	}
}

// Add publishes a checked batch of changes as data. A row over the
// limit of one message is 54000.
func (b *BulkTxn) Add(changes []exec.Change) error {
	msgs, err := exec.EncodeChangelogChunks(b.members, changes, b.limit)
	var tooLarge *exec.ErrChangelogTooLarge
	if errors.As(err, &tooLarge) {
		return sqlerr.New(sqlerr.ProgramLimitExceeded, "a row of table %q is %d bytes, over the limit of %d bytes for one row", b.d.Name, tooLarge.Size, tooLarge.Limit).
			WithHint("The limit is the NATS server's max_payload.")
	}
	if err != nil {
		return err
	}
	subject := broker.TxnDataSubject(b.id)
	for _, m := range msgs {
		f, err := b.t.cfg.Broker.JS.PublishAsync(subject, m, jetstream.WithExpectStream(broker.TxnStream))
		if err != nil {
			return b.failed(err)
		}
		b.inflight = append(b.inflight, bulkPublish{f: f, size: len(m)})
		b.inflightBytes += len(m)
		if err := b.await(false); err != nil {
			return err
		}
	}
	return nil
}

// Flush waits for the data published so far.
func (b *BulkTxn) Flush() error { return b.await(true) }

// await waits for the oldest publishes in flight: all of them, or until
// fewer than bulkWindow holding under bulkWindowBytes are left. The
// acknowledgements come in the order of the publishes, which is the
// order of their sequences in refs.
func (b *BulkTxn) await(all bool) error {
	ctx, cancel := context.WithTimeout(context.Background(), PublishTimeout)
	defer cancel()
	done := 0
	for ; done < len(b.inflight); done++ {
		if !all && len(b.inflight)-done < bulkWindow && b.inflightBytes < bulkWindowBytes {
			break
		}
		p := b.inflight[done]
		ack, err := AwaitAck(ctx, p.f)
		if err != nil {
			return b.failed(err)
		}
		b.refs = broker.AddTxnRange(b.refs, ack.Sequence)
		b.inflightBytes -= p.size
	}
	if done > 0 {
		n := copy(b.inflight, b.inflight[done:])
		clear(b.inflight[n:])
		b.inflight = b.inflight[:n]
	}
	return nil
}

// ErrStopReadBack, returned by ReadBack's fn, ends the read without an
// error.
var ErrStopReadBack = errors.New("stop reading the commit's data back")

// ReadBack hands fn the changes of the data flushed so far (Flush), a
// message at a time, in order.
func (b *BulkTxn) ReadBack(ctx context.Context, fn func([]exec.Change) error) error {
	dec := exec.NewChangelogDecoder(b.members)
	err := b.t.cfg.Broker.ReadTxnData(ctx, broker.TxnRef{Txn: b.id, Data: b.refs}, func(data []byte) error {
		changes, err := dec.Decode(data)
		if err != nil {
			return err
		}
		return fn(changes)
	})
	if errors.Is(err, ErrStopReadBack) {
		return nil
	}
	return err
}

// Commit commits the data flushed so far and waits until the table holds
// it: the next commit to the table is computed on top of this one, and
// the log does not keep its changes. what names the write in a timeout
// ("a COPY").
func (b *BulkTxn) Commit(what string) error {
	faults.Crash("txn-after-data")
	seq, err := b.decide()
	if err != nil {
		if seq != 0 {
			// Stored, not fsynced: the table takes it, unseen by the log.
			b.log.MarkStale()
		}
		return err
	}
	faults.Crash("txn-after-decision")
	if werr := b.t.cfg.WaitTableAt(context.Background(), b.d, seq, what); werr != nil {
		// Committed all the same; the next writer waits for the whole
		// changelog first.
		b.log.MarkStale()
	}
	return nil
}

// decide publishes the reference on the table's subject, then the
// decision, the commit point: readers at the reference wait for it. seq
// is the reference's sequence once it is committed.
func (b *BulkTxn) decide() (uint64, error) {
	t := b.t
	if err := t.checkFence(); err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), PublishTimeout)
	defer cancel()
	ref := broker.TxnRef{Txn: b.id, Decide: true, Data: b.refs}
	f, err := t.cfg.Broker.JS.PublishMsgAsync(broker.NewTxnRefMsg(b.d.Subject, ref), jetstream.WithExpectStream(b.d.JSStream))
	var ack *jetstream.PubAck
	if err == nil {
		ack, err = AwaitAck(ctx, f)
	}
	var notDurable *broker.NotDurableError
	if errors.As(err, &notDurable) {
		ack, err = notDurable.Ack, nil
	}
	parts := []TxnPart{{D: b.d, Log: b.log}}
	if err != nil {
		if committed, derr := t.DecideTxn(b.id, false); derr != nil || committed {
			return 0, t.TxnUndecided(b.id, parts, errors.Join(err, derr))
		}
		if se := t.cfg.Broker.StreamWriteError(b.d.JSStream, "could not commit"); se != nil {
			return 0, se
		}
		return 0, t.publishFailure(err, "could not commit")
	}
	faults.Crash("txn-before-decision")
	committed, derr := t.DecideTxn(b.id, true)
	if derr != nil {
		return 0, t.TxnUndecided(b.id, parts, derr)
	}
	if !committed {
		return 0, sqlerr.New(sqlerr.SerializationFailure, "the commit was aborted before it was decided").
			WithHint("Retry the transaction.")
	}
	t.cfg.Acknowledged(b.d.Subject, ack.Sequence)
	if notDurable != nil {
		return ack.Sequence, StoredNotDurable("the commit", notDurable)
	}
	return ack.Sequence, nil
}
