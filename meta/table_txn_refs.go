package meta

import (
	"context"
	"errors"

	"github.com/nats-io/nats.go/jetstream"

	"streamdb/broker"
	"streamdb/faults"
	"streamdb/sqlerr"
)

// A transaction's data is in the transaction stream; what commits it is a
// reference on each table's subject naming that data, published after
// it (publishTxnRefs), and, for a transaction that asks for one, its
// decision after the references (decideAfterRefs). A block's COMMIT
// (PublishTxn) and a bulk commit (BulkTxn.decide) end this way.

// publishTxnRefs publishes transaction id's reference to each part's
// subject, part i's naming refs[i] (its data's sequences in the
// transaction stream); decide marks references that wait for the
// transaction's decision. The references of several parts are published
// fenced (Runtime.PublishFenced), so views see them in one epoch. It
// returns each part's reference sequence, and notDurable when a
// reference was stored but not made durable.
func (t *Tables) publishTxnRefs(ctx context.Context, id string, decide bool, parts []TxnPart, refs [][][2]uint64) (seqs []uint64, notDurable *broker.NotDurableError, err error) {
	seqs = make([]uint64, len(parts))
	publish := func() (map[string]uint64, error) {
		if err := t.checkFence(); err != nil {
			return nil, err
		}
		futures := make([]jetstream.PubAckFuture, len(parts))
		var err error
		for i, p := range parts {
			ref := broker.TxnRef{Txn: id, Decide: decide, Data: refs[i]}
			if futures[i], err = t.cfg.Broker.JS.PublishMsgAsync(broker.NewTxnRefMsg(p.D.Subject, ref), jetstream.WithExpectStream(p.D.JSStream)); err != nil {
				break
			}
		}
		published := map[string]uint64{}
		for i, f := range futures {
			if f == nil {
				continue
			}
			ack, perr := AwaitAck(ctx, f)
			if nd := (*broker.NotDurableError)(nil); errors.As(perr, &nd) {
				ack, perr, notDurable = nd.Ack, nil, nd
			}
			if perr != nil {
				err = errors.Join(err, perr)
				continue
			}
			seqs[i] = ack.Sequence
			published[parts[i].D.Subject] = ack.Sequence
		}
		return published, err
	}
	if len(parts) > 1 {
		subjects := make([]string, len(parts))
		for i, p := range parts {
			subjects[i] = p.D.Subject
		}
		err = t.cfg.Runtime.PublishFenced(subjects, publish)
	} else {
		_, err = publish()
	}
	return seqs, notDurable, err
}

// decideAfterRefs ends transaction id, which asked for a decision, once
// its references were published (refErr: why they were not): aborted
// when they failed, unless the abort finds it committed or cannot tell
// (then it is undecided: TxnUndecided), else committed. A commit that
// was aborted meanwhile fails with 40001.
func (t *Tables) decideAfterRefs(id string, parts []TxnPart, refErr error) error {
	if refErr != nil {
		if committed, derr := t.DecideTxn(id, false); derr != nil || committed {
			return t.TxnUndecided(id, parts, errors.Join(refErr, derr))
		}
		for _, p := range parts {
			if se := t.cfg.Broker.StreamWriteError(p.D.JSStream, "could not commit"); se != nil {
				return se
			}
		}
		return t.publishFailure(refErr, "could not commit")
	}
	faults.Crash("txn-before-decision")
	committed, derr := t.DecideTxn(id, true)
	if derr != nil {
		return t.TxnUndecided(id, parts, derr)
	}
	if !committed {
		return sqlerr.New(sqlerr.SerializationFailure, "the commit was aborted before it was decided").
			WithHint("Retry the transaction.")
	}
	return nil
}
