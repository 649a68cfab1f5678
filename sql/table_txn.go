package sql

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

// txnPart is what a commit writes to one subject.
type txnPart struct {
	d *catalog.Descriptor
	// msgs are the messages the subject would take: a table's changelog
	// messages, or a stream's rows.
	msgs [][]byte
	// log and changes are the table's log and the commit's changes to it
	// (nil for a stream).
	log     *tableLog
	changes []exec.Change
	// source, when not nil, hands over the part's messages in place of
	// msgs, one at a time (a transaction block's spilled changes); the
	// log then does not keep the changes, so the commit waits until the
	// table has applied them.
	source func(emit func([]byte) error) error
}

// publishTxn publishes a commit through the transaction stream (see
// broker/txn.go): its intent, its data, a reference on each subject it
// writes and, over several subjects or several data messages, its
// decision. Nothing of it is visible unless all of it is. Caller holds
// stateMu (shared) and the log mu of every table it writes, with their
// queues idle.
//
// A commit of several data messages asks for a decision (its intent's
// Decide), as a streaming COPY does: its data may take longer to publish
// than the window after which an undecided transaction over one subject
// is taken for ended and removed (txnRemovalWindow), and a reference
// landing after that would find nothing. Decided ones are never removed
// undecided, so their data publishes without an overall deadline, each
// window of publishes within publishTimeout.
func (e *Engine) publishTxn(parts []txnPart) error {
	if err := e.checkFence(); err != nil {
		return err
	}
	nmsgs := 0
	for _, p := range parts {
		nmsgs += len(p.msgs)
		if p.source != nil {
			nmsgs += 2 // any number: it asks for a decision
		}
	}
	id := newTxnID()
	decide := len(parts) > 1 || nmsgs > 1
	// A COMMIT under way is not cancelled by its client: each step ends
	// within publishTimeout either way.
	ctx, cancel := context.WithTimeout(context.Background(), publishTimeout)
	defer cancel()
	failed := func(err error) error {
		if se := e.broker.StreamWriteError(broker.TxnStream, "could not commit"); se != nil {
			return se
		}
		return e.publishFailure(err, "could not commit")
	}

	intent := broker.TxnIntent{Decide: decide && len(parts) == 1}
	for _, p := range parts {
		intent.Subjects = append(intent.Subjects, broker.TxnSubject{Stream: p.d.JSStream, Subject: p.d.Subject})
	}
	body, _ := json.Marshal(intent)
	if _, err := e.broker.JS.Publish(ctx, broker.TxnIntentSubject(id), body, jetstream.WithExpectStream(broker.TxnStream)); err != nil {
		return failed(err)
	}
	dataCtx := ctx
	if decide {
		dataCtx = context.Background()
	}
	refs, err := e.publishTxnData(dataCtx, id, parts)
	if err != nil {
		if decide {
			e.abortTxn(id)
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
		// publishTimeout.
		var rcancel context.CancelFunc
		ctx, rcancel = context.WithTimeout(context.Background(), publishTimeout)
		defer rcancel()
	}

	subjects := make([]string, len(parts))
	for i, p := range parts {
		subjects[i] = p.d.Subject
	}
	seqs := make([]uint64, len(parts))
	var notDurable *broker.NotDurableError
	publishRefs := func() (map[string]uint64, error) {
		if err := e.checkFence(); err != nil {
			return nil, err
		}
		futures := make([]jetstream.PubAckFuture, len(parts))
		var err error
		for i, p := range parts {
			ref := broker.TxnRef{Txn: id, Decide: decide, Data: refs[i]}
			if futures[i], err = e.broker.JS.PublishMsgAsync(broker.NewTxnRefMsg(p.d.Subject, ref), jetstream.WithExpectStream(p.d.JSStream)); err != nil {
				break
			}
		}
		published := map[string]uint64{}
		for i, f := range futures {
			if f == nil {
				continue
			}
			ack, perr := awaitAck(ctx, f)
			if nd := (*broker.NotDurableError)(nil); errors.As(perr, &nd) {
				ack, perr, notDurable = nd.Ack, nil, nd
			}
			if perr != nil {
				err = errors.Join(err, perr)
				continue
			}
			seqs[i] = ack.Sequence
			published[parts[i].d.Subject] = ack.Sequence
		}
		return published, err
	}
	if len(parts) > 1 {
		err = e.rt.PublishFenced(subjects, func() (map[string]uint64, error) { return publishRefs() })
	} else {
		_, err = publishRefs()
	}
	if err != nil {
		if !decide {
			// The reference is the commit: it may have landed unseen.
			parts[0].markUnsure()
			if se := e.broker.StreamWriteError(parts[0].d.JSStream, "could not commit"); se != nil {
				return se
			}
			return e.publishFailure(err, "could not commit")
		}
		if committed, derr := e.decideTxn(id, false); derr != nil || committed {
			return e.txnUndecided(id, parts, errors.Join(err, derr))
		}
		for _, p := range parts {
			if se := e.broker.StreamWriteError(p.d.JSStream, "could not commit"); se != nil {
				return se
			}
		}
		return e.publishFailure(err, "could not commit")
	}
	if decide {
		faults.Crash("txn-before-decision")
		committed, derr := e.decideTxn(id, true)
		if derr != nil {
			return e.txnUndecided(id, parts, derr)
		}
		if !committed {
			return sqlerr.New(sqlerr.SerializationFailure, "the commit was aborted before it was decided").
				WithHint("Retry the transaction.")
		}
	}
	faults.Crash("txn-after-decision")
	for i, p := range parts {
		e.acknowledged(p.d.Subject, seqs[i])
		switch {
		case p.log != nil && p.source != nil:
			if werr := e.waitTableAt(context.Background(), p.d, seqs[i], "a COMMIT"); werr != nil {
				// Committed all the same; the next writer waits for the
				// whole changelog first.
				p.log.current = false
			}
		case p.log != nil:
			p.log.added(seqs[i], p.changes)
		}
	}
	if notDurable != nil {
		return storedNotDurable("the commit", notDurable)
	}
	return nil
}

// publishTxnData publishes the parts' messages as transaction id's data
// and returns, per part, their sequences in the transaction stream.
func (e *Engine) publishTxnData(ctx context.Context, id string, parts []txnPart) ([][][2]uint64, error) {
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
		ctx, cancel := context.WithTimeout(ctx, publishTimeout)
		defer cancel()
		done := 0
		for ; done < len(inflight); done++ {
			if !all && len(inflight)-done < window && (!bounded || inflightBytes < bulkWindowBytes) {
				break
			}
			p := inflight[done]
			ack, err := awaitAck(ctx, p.f)
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
			f, err := e.broker.JS.PublishAsync(subject, m, jetstream.WithExpectStream(broker.TxnStream))
			if err != nil {
				return err
			}
			inflight = append(inflight, pending{part: i, size: len(m), f: f})
			inflightBytes += len(m)
			return await(false, p.source != nil)
		}
		for _, m := range p.msgs {
			if err := publish(m); err != nil {
				return nil, err
			}
		}
		if p.source != nil {
			if err := p.source(publish); err != nil {
				return nil, err
			}
		}
	}
	return refs, await(true, false)
}

// awaitAck waits for an async publish's acknowledgement.
func awaitAck(ctx context.Context, f jetstream.PubAckFuture) (*jetstream.PubAck, error) {
	select {
	case ack := <-f.Ok():
		return ack, nil
	case err := <-f.Err():
		return nil, err
	case <-ctx.Done():
		return nil, fmt.Errorf("no acknowledgement from JetStream: %w", nats.ErrTimeout)
	}
}

// decideTxn records transaction id's outcome, trying until publishTimeout,
// and returns the outcome that stands.
func (e *Engine) decideTxn(id string, commit bool) (bool, error) {
	ctx, cancel := context.WithTimeout(context.Background(), publishTimeout)
	defer cancel()
	for {
		committed, err := e.broker.DecideTxn(ctx, id, commit)
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

// txnUndecided answers a commit whose decision could not be recorded: its
// references wait for one, so the server keeps trying to abort it (which
// yields to a commit decision that did land).
func (e *Engine) txnUndecided(id string, parts []txnPart, err error) error {
	for _, p := range parts {
		p.markUnsure()
	}
	go func() {
		for {
			if _, derr := e.decideTxn(id, false); derr == nil {
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
func (e *Engine) abortTxn(id string) {
	if committed, err := e.decideTxn(id, false); err != nil || committed {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), publishTimeout)
	defer cancel()
	if err := e.broker.RemoveTxn(ctx, id); err != nil {
		e.log.Warn("remove an aborted transaction", "txn", id, "err", err)
	}
}

// txnRemovalWindow is how long after it began an undecided transaction
// over one subject that did not ask for a decision is taken for ended:
// its reference, published within publishTimeout of its start or never,
// has landed by then. Crash tests shorten it (faults.Duration).
var txnRemovalWindow = faults.Duration("txn-removal-window", 2*publishTimeout)

// markUnsure makes the next writer of the part's table reread its whole
// changelog (see tableLog.unsure).
func (p txnPart) markUnsure() {
	if p.log != nil {
		p.log.unsure.Store(true)
	}
}

func newTxnID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// resolveTxns runs at start, before any write: it aborts every
// transaction over several subjects (or that asks for a decision) that a
// crash left undecided, so that readers waiting at its references go on.
func (e *Engine) resolveTxns(ctx context.Context) error {
	if err := e.broker.EnsureTxnStream(ctx); err != nil {
		return err
	}
	var failed error
	err := e.broker.TxnIntents(ctx, 1, func(t broker.Txn, _ uint64) bool {
		if t.Decided || len(t.Intent.Subjects) < 2 && !t.Intent.Decide {
			return true
		}
		committed, err := e.broker.DecideTxn(ctx, t.ID, false)
		var nd *broker.NotDurableError
		if err != nil && !errors.As(err, &nd) {
			failed = fmt.Errorf("abort transaction %s: %w", t.ID, err)
			return false
		}
		e.log.Info("resolved a transaction a crash left undecided", "txn", t.ID, "committed", committed)
		return true
	})
	if err != nil {
		return fmt.Errorf("list transactions: %w", err)
	}
	return failed
}

// removeTxns removes, oldest first, the transactions no reader can reach
// any more: those ended (decided, or begun 2*publishTimeout ago) before
// the first message each subject they wrote still holds. It stops at the
// first one that is still reachable and resumes there after the next
// purge (txnsRemovedTo), so a purge costs what it removes, not what the
// stream holds. Runs under ddlMu, after a purge.
func (e *Engine) removeTxns(ctx context.Context) {
	first := map[string]time.Time{} // per JetStream stream, this round
	retainedSince := func(stream string) (time.Time, bool, error) {
		if t, ok := first[stream]; ok {
			return t, true, nil
		}
		t, err := e.broker.FirstTime(ctx, stream)
		if errors.Is(err, jetstream.ErrStreamNotFound) {
			return time.Time{}, false, nil
		}
		if err != nil {
			return time.Time{}, false, err
		}
		first[stream] = t
		return t, true, nil
	}
	err := e.broker.TxnIntents(ctx, e.txnsRemovedTo, func(t broker.Txn, seq uint64) bool {
		ended := t.Began.Add(txnRemovalWindow)
		switch {
		case t.Decided:
			ended = t.DecidedAt
		case len(t.Intent.Subjects) > 1 || t.Intent.Decide || time.Now().Before(ended):
			return false // undecided, or its reference may still land
		}
		for _, s := range t.Intent.Subjects {
			since, exists, err := retainedSince(s.Stream)
			if err != nil || exists && !since.After(ended) {
				return false
			}
		}
		if err := e.broker.RemoveTxn(ctx, t.ID); err != nil {
			e.log.Warn("remove transaction", "txn", t.ID, "err", err)
			return false
		}
		e.txnsRemovedTo = seq + 1
		return true
	})
	if err != nil {
		e.log.Warn("list transactions", "err", err)
	}
}
