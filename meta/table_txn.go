package meta

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"streamdb/broker"
	"streamdb/catalog"
	"streamdb/exec"
	"streamdb/faults"
	"streamdb/sqlerr"
)

// TxnPart is what a commit writes to one subject.
type TxnPart struct {
	D *catalog.Descriptor
	// Msgs are the messages the subject would take: a table's changelog
	// messages, or a stream's rows.
	Msgs [][]byte
	// Log and Changes are the table's log and the commit's changes to it
	// (nil for a stream).
	Log     *TableLog
	Changes []exec.Change
	// Source, when not nil, hands over the part's messages in place of
	// Msgs, one at a time (a transaction block's spilled changes); the
	// log then does not keep the changes, so the commit waits until the
	// table has applied them.
	Source func(emit func([]byte) error) error
}

// TxnWindowBytes bounds the bytes of a transaction's data publishes in
// flight while a part's Source encodes them, so that the writer's memory
// does not grow with the size of a commit.
const TxnWindowBytes = 4 << 20

// PublishTxn publishes a commit through the transaction stream (see
// broker/txn.go): its intent, its data, a reference on each subject it
// writes and, over several subjects or several data messages, its
// decision. Nothing of it is visible unless all of it is. Caller holds
// stateMu (shared) and the lock of every table it writes, with their
// queues idle.
//
// A commit of several data messages asks for a decision (its intent's
// Decide), as a streaming COPY does: its data may take longer to publish
// than the window after which an undecided transaction over one subject
// is taken for ended and removed (txnRemovalWindow), and a reference
// landing after that would find nothing. Decided ones are never removed
// undecided, so their data publishes without an overall deadline, each
// window of publishes within PublishTimeout.
func (t *Tables) PublishTxn(parts []TxnPart) error {
	if err := t.checkFence(); err != nil {
		return err
	}
	nmsgs := 0
	for _, p := range parts {
		nmsgs += len(p.Msgs)
		if p.Source != nil {
			nmsgs += 2 // any number: it asks for a decision
		}
	}
	id := NewTxnID()
	decide := len(parts) > 1 || nmsgs > 1
	// A COMMIT under way is not cancelled by its client: each step ends
	// within PublishTimeout either way.
	ctx, cancel := context.WithTimeout(context.Background(), PublishTimeout)
	defer cancel()
	failed := func(err error) error {
		if se := t.cfg.Broker.StreamWriteError(broker.TxnStream, "could not commit"); se != nil {
			return se
		}
		return t.publishFailure(err, "could not commit")
	}

	intent := broker.TxnIntent{Decide: decide && len(parts) == 1}
	for _, p := range parts {
		intent.Subjects = append(intent.Subjects, broker.TxnSubject{Stream: p.D.JSStream, Subject: p.D.Subject})
	}
	body, _ := json.Marshal(intent)
	if _, err := t.cfg.Broker.JS.Publish(ctx, broker.TxnIntentSubject(id), body, jetstream.WithExpectStream(broker.TxnStream)); err != nil {
		return failed(err)
	}
	dataCtx := ctx
	if decide {
		dataCtx = context.Background()
	}
	refs, err := t.publishTxnData(dataCtx, id, parts)
	if err != nil {
		if decide {
			t.abortTxn(id)
		}
		if se := (*sqlerr.Error)(nil); errors.As(err, &se) {
			return se // a part's source refused a change
		}
		return failed(err) // nothing refers to what landed
	}
	faults.Crash("txn-after-data")
	faults.Sleep("txn-after-data")
	if decide {
		// The data took as long as it took; the references get their own
		// PublishTimeout.
		var rcancel context.CancelFunc
		ctx, rcancel = context.WithTimeout(context.Background(), PublishTimeout)
		defer rcancel()
	}

	seqs, notDurable, err := t.publishTxnRefs(ctx, id, decide, parts, refs)
	if err != nil && !decide {
		// The reference is the commit: it may have landed unseen.
		parts[0].markUnsure()
		if se := t.cfg.Broker.StreamWriteError(parts[0].D.JSStream, "could not commit"); se != nil {
			return se
		}
		return t.publishFailure(err, "could not commit")
	}
	if decide {
		if err := t.decideAfterRefs(id, parts, err); err != nil {
			return err
		}
	}
	faults.Crash("txn-after-decision")
	for i, p := range parts {
		t.cfg.Acknowledged(p.D.Subject, seqs[i])
		switch {
		case p.Log != nil && p.Source != nil:
			if werr := t.cfg.WaitTableAt(context.Background(), p.D, seqs[i], "a COMMIT"); werr != nil {
				// Committed all the same; the next writer waits for the
				// whole changelog first.
				p.Log.current = false
			}
		case p.Log != nil:
			p.Log.added(seqs[i], p.Changes)
		}
	}
	if notDurable != nil {
		return StoredNotDurable("the commit", notDurable)
	}
	return nil
}

// publishTxnData publishes the parts' messages as transaction id's data
// and returns, per part, their sequences in the transaction stream.
func (t *Tables) publishTxnData(ctx context.Context, id string, parts []TxnPart) ([][][2]uint64, error) {
	subject := broker.TxnDataSubject(id)
	refs := make([][][2]uint64, len(parts))
	// Acknowledgements are awaited in a sliding window, so that a commit
	// of any size keeps a bounded number of publishes in flight (and, for
	// a part encoded as it is published, a bounded number of bytes).
	const window = 256
	type pending struct {
		part, size int
		f          jetstream.PubAckFuture
	}
	var inflight []pending
	inflightBytes := 0
	// await waits for the oldest publishes: all of them, or until the
	// window has room.
	await := func(all, bounded bool) error {
		ctx, cancel := context.WithTimeout(ctx, PublishTimeout)
		defer cancel()
		done := 0
		for ; done < len(inflight); done++ {
			if !all && len(inflight)-done < window && (!bounded || inflightBytes < TxnWindowBytes) {
				break
			}
			p := inflight[done]
			ack, err := AwaitAck(ctx, p.f)
			if err != nil {
				return err
			}
			refs[p.part] = broker.AddTxnRange(refs[p.part], ack.Sequence)
			inflightBytes -= p.size
		}
		n := copy(inflight, inflight[done:])
		clear(inflight[n:])
		inflight = inflight[:n]
		return nil
	}
	for i, p := range parts {
		publish := func(m []byte) error {
			f, err := t.cfg.Broker.JS.PublishAsync(subject, m, jetstream.WithExpectStream(broker.TxnStream))
			if err != nil {
				return err
			}
			inflight = append(inflight, pending{part: i, size: len(m), f: f})
			inflightBytes += len(m)
			return await(false, p.Source != nil)
		}
		for _, m := range p.Msgs {
			if err := publish(m); err != nil {
				return nil, err
			}
		}
		if p.Source != nil {
			if err := p.Source(publish); err != nil {
				return nil, err
			}
		}
	}
	return refs, await(true, false)
}

// AwaitAck waits for an async publish's acknowledgement.
func AwaitAck(ctx context.Context, f jetstream.PubAckFuture) (*jetstream.PubAck, error) {
	select {
	case ack := <-f.Ok():
		return ack, nil
	case err := <-f.Err():
		return nil, err
	case <-ctx.Done():
		return nil, fmt.Errorf("no acknowledgement from JetStream: %w", nats.ErrTimeout)
	}
}

// DecideTxn records transaction id's outcome, trying until PublishTimeout,
// and returns the outcome that stands.
func (t *Tables) DecideTxn(id string, commit bool) (bool, error) {
	ctx, cancel := context.WithTimeout(context.Background(), PublishTimeout)
	defer cancel()
	for {
		committed, err := t.cfg.Broker.DecideTxn(ctx, id, commit)
		var nd *broker.NotDurableError
		if err == nil || errors.As(err, &nd) {
			return committed, nil
		}
		select {
		case <-ctx.Done():
			return false, err
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// TxnUndecided answers a commit whose decision could not be recorded: its
// references wait for one, so the server keeps trying to abort it (which
// yields to a commit decision that did land).
func (t *Tables) TxnUndecided(id string, parts []TxnPart, err error) error {
	for _, p := range parts {
		p.markUnsure()
	}
	go func() {
		for {
			if _, derr := t.DecideTxn(id, false); derr == nil {
				return
			}
		}
	}()
	return sqlerr.New(sqlerr.TransactionResolutionUnknown, "the commit's outcome could not be recorded: %v", err).
		WithHint("Read the tables to see whether it took effect; readers wait until streamdb records it.")
}

// abortTxn decides transaction id aborted after its data failed to
// publish (so that readers and removal need not wait for the next start)
// and removes its records.
func (t *Tables) abortTxn(id string) {
	if committed, err := t.DecideTxn(id, false); err != nil || committed {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), PublishTimeout)
	defer cancel()
	if err := t.cfg.Broker.RemoveTxn(ctx, id); err != nil {
		t.cfg.Log.Warn("remove an aborted transaction", "txn", id, "err", err)
	}
}

// txnRemovalWindow is how long after it began an undecided transaction
// over one subject that did not ask for a decision is taken for ended:
// its reference, published within PublishTimeout of its start or never,
// has landed by then. Crash tests shorten it (faults.Duration).
var txnRemovalWindow = faults.Duration("txn-removal-window", 2*PublishTimeout)

// markUnsure makes the next writer of the part's table reread its whole
// changelog (see TableLog.unsure).
func (p TxnPart) markUnsure() {
	if p.Log != nil {
		p.Log.MarkUnsure()
	}
}

// NewTxnID returns a new transaction's id, random.
func NewTxnID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// ResolveTxns runs at start, before any write: it aborts every
// transaction over several subjects (or that asks for a decision) that a
// crash left undecided, so that readers waiting at its references go on.
func (t *Tables) ResolveTxns(ctx context.Context) error {
	if err := t.cfg.Broker.EnsureTxnStream(ctx); err != nil {
		return err
	}
	var failed error
	err := t.cfg.Broker.TxnIntents(ctx, 1, func(txn broker.Txn, _ uint64) bool {
		if txn.Decided || len(txn.Intent.Subjects) < 2 && !txn.Intent.Decide {
			return true
		}
		committed, err := t.cfg.Broker.DecideTxn(ctx, txn.ID, false)
		var nd *broker.NotDurableError
		if err != nil && !errors.As(err, &nd) {
			failed = fmt.Errorf("abort transaction %s: %w", txn.ID, err)
			return false
		}
		t.cfg.Log.Info("resolved a transaction a crash left undecided", "txn", txn.ID, "committed", committed)
		return true
	})
	if err != nil {
		return fmt.Errorf("list transactions: %w", err)
	}
	return failed
}

// RemoveTxns removes, oldest first, the transactions no reader can reach
// any more: those ended (decided, or begun 2*PublishTimeout ago) before
// the first message each subject they wrote still holds. It stops at the
// first one that is still reachable and resumes there after the next
// purge (txnsRemovedTo), so a purge costs what it removes, not what the
// stream holds. Runs under ddlMu, after a purge.
func (t *Tables) RemoveTxns(ctx context.Context) {
	first := map[string]time.Time{} // per JetStream stream, this round
	retainedSince := func(stream string) (time.Time, bool, error) {
		if t, ok := first[stream]; ok {
			return t, true, nil
		}
		at, err := t.cfg.Broker.FirstTime(ctx, stream)
		if errors.Is(err, jetstream.ErrStreamNotFound) {
			return time.Time{}, false, nil
		}
		if err != nil {
			return time.Time{}, false, err
		}
		first[stream] = at
		return at, true, nil
	}
	err := t.cfg.Broker.TxnIntents(ctx, t.txnsRemovedTo, func(txn broker.Txn, seq uint64) bool {
		ended := txn.Began.Add(txnRemovalWindow)
		switch {
		case txn.Decided:
			ended = txn.DecidedAt
		case len(txn.Intent.Subjects) > 1 || txn.Intent.Decide || time.Now().Before(ended):
			return false // undecided, or its reference may still land
		}
		for _, s := range txn.Intent.Subjects {
			since, exists, err := retainedSince(s.Stream)
			if err != nil || exists && !since.After(ended) {
				return false
			}
		}
		if err := t.cfg.Broker.RemoveTxn(ctx, txn.ID); err != nil {
			t.cfg.Log.Warn("remove transaction", "txn", txn.ID, "err", err)
			return false
		}
		t.txnsRemovedTo = seq + 1
		return true
	})
	if err != nil {
		t.cfg.Log.Warn("list transactions", "err", err)
	}
}
