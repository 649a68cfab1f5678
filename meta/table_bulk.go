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

// BulkTxn is one streaming commit to a table and, when its statement's
// foreign key actions change others (BeginBulkTables), to those too: the
// data of every table goes to the one transaction, in any interleaving
// (each table's reference names its own sequences), and one decision
// commits all of it.
type BulkTxn struct {
	t      *Tables
	d      *catalog.Descriptor // the first table's, named in errors
	log    *TableLog
	id     string // the transaction's id
	tables []*bulkTable
	limit  int // of one message's bytes (Tables.ChangelogLimit)

	// inflight are the publishes not acknowledged yet, oldest first, of
	// inflightBytes in all.
	inflight      []bulkPublish
	inflightBytes int
}

// BulkTable is one table a bulk commit writes: its descriptor, its log
// (which the caller holds locked) and the columns its changelog encodes
// (the table's member columns).
type BulkTable struct {
	D       *catalog.Descriptor
	Log     *TableLog
	Members []types.Column
}

// bulkTable is a BulkTable and the data published for it: its sequences
// in the transaction stream.
type bulkTable struct {
	BulkTable
	refs [][2]uint64
}

// bulkPublish is a data publish not acknowledged yet.
type bulkPublish struct {
	f     jetstream.PubAckFuture
	size  int
	table int // its table's place in tables
}

// BeginBulk publishes the intent of a streaming commit to table d, whose
// log the caller holds locked; members are the columns its changelog
// encodes (the table's member columns).
func (t *Tables) BeginBulk(d *catalog.Descriptor, log *TableLog, members []types.Column) (*BulkTxn, error) {
	return t.BeginBulkTables([]BulkTable{{D: d, Log: log, Members: members}})
}

// BeginBulkTables publishes the intent of a streaming commit to tables
// (the first is the statement's, the others those its foreign key
// actions change), whose logs the caller holds locked. Every one of them
// gets a reference at the commit, with or without data, so that the
// transaction can be removed once they have moved past it.
func (t *Tables) BeginBulkTables(tables []BulkTable) (*BulkTxn, error) {
	b := &BulkTxn{t: t, d: tables[0].D, log: tables[0].Log, id: NewTxnID(), limit: t.ChangelogLimit()}
	intent := broker.TxnIntent{Decide: true}
	for _, x := range tables {
		b.tables = append(b.tables, &bulkTable{BulkTable: x})
		intent.Subjects = append(intent.Subjects, broker.TxnSubject{Stream: x.D.JSStream, Subject: x.D.Subject})
	}
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

// Add publishes a checked batch of changes to the first table as data. A
// row over the limit of one message is 54000.
func (b *BulkTxn) Add(changes []exec.Change) error { return b.AddTo(0, changes) }

// AddTo publishes a checked batch of changes to the i-th table of
// BeginBulkTables as data.
func (b *BulkTxn) AddTo(i int, changes []exec.Change) error {
	x := b.tables[i]
	msgs, err := exec.EncodeChangelogChunks(x.Members, changes, b.limit)
	var tooLarge *exec.ErrChangelogTooLarge
	if errors.As(err, &tooLarge) {
		return sqlerr.New(sqlerr.ProgramLimitExceeded, "a row of table %q is %d bytes, over the limit of %d bytes for one row", x.D.Name, tooLarge.Size, tooLarge.Limit).
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
		b.inflight = append(b.inflight, bulkPublish{f: f, size: len(m), table: i})
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
		x := b.tables[p.table]
		x.refs = broker.AddTxnRange(x.refs, ack.Sequence)
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

// ReadBack hands fn the changes of the first table's data flushed so far
// (Flush), a message at a time, in order.
func (b *BulkTxn) ReadBack(ctx context.Context, fn func([]exec.Change) error) error {
	x := b.tables[0]
	dec := exec.NewChangelogDecoder(x.Members)
	err := b.t.cfg.Broker.ReadTxnData(ctx, broker.TxnRef{Txn: b.id, Data: x.refs}, func(data []byte) error {
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

// Commit commits the data flushed so far and waits until every table
// holds it: the next commit to each is computed on top of this one, and
// the logs do not keep its changes. what names the write in a timeout
// ("a COPY").
func (b *BulkTxn) Commit(what string) error {
	faults.Crash("txn-after-data")
	seqs, err := b.decide()
	if err != nil {
		for i, seq := range seqs {
			if seq != 0 {
				// Stored, not fsynced: the table takes it, unseen by the log.
				b.tables[i].Log.MarkStale()
			}
		}
		return err
	}
	faults.Crash("txn-after-decision")
	for i, x := range b.tables {
		if werr := b.t.cfg.WaitTableAt(context.Background(), x.D, seqs[i], what); werr != nil {
			// Committed all the same; the next writer waits for the whole
			// changelog first.
			x.Log.MarkStale()
		}
	}
	return nil
}

// decide publishes the reference on each table's subject (fenced, over
// several: Runtime.PublishFenced), then the decision, the commit point:
// readers at a reference wait for it. seqs are the references'
// sequences once they are committed.
func (b *BulkTxn) decide() ([]uint64, error) {
	t := b.t
	if err := t.checkFence(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), PublishTimeout)
	defer cancel()
	parts := make([]TxnPart, len(b.tables))
	refs := make([][][2]uint64, len(b.tables))
	for i, x := range b.tables {
		parts[i] = TxnPart{D: x.D, Log: x.Log}
		refs[i] = x.refs
	}
	seqs, notDurable, err := t.publishTxnRefs(ctx, b.id, true, parts, refs)
	if err := t.decideAfterRefs(b.id, parts, err); err != nil {
		return nil, err
	}
	for i, x := range b.tables {
		t.cfg.Acknowledged(x.D.Subject, seqs[i])
	}
	if notDurable != nil {
		return seqs, StoredNotDurable("the commit", notDurable)
	}
	return seqs, nil
}
