package sql

import (
	"context"

	"streamdb/catalog"
	"streamdb/exec"
	"streamdb/front"
	"streamdb/sqlerr"
)

// A stream with envelope = 'debezium' may name the subject of Debezium's
// transaction metadata events (transaction_subject = 'dbserver1.transaction',
// the topic Debezium Server publishes BEGIN and END events to with
// provide.transaction.metadata = true); views then see each source
// transaction's changes in one epoch (exec/envelope_txn.go). The subject
// must be in the JetStream stream of the change events, whose sequences
// then order both.

func init() {
	streamOptions[exec.OptTransactionSubject] = true
}

// checkTxnSubjectOption checks transaction_subject of CREATE STREAM n,
// whose envelope is env ("" for none).
func checkTxnSubjectOption(n *front.CreateSource, env string) error {
	subj, ok := n.Options[exec.OptTransactionSubject]
	if !ok {
		return nil
	}
	if env != catalog.EnvelopeDebezium {
		return sqlerr.New(sqlerr.InvalidParameterValue, "option transaction_subject needs envelope = 'debezium'").
			WithHint("transaction_subject names the subject of Debezium's transaction events (BEGIN and END), for streams of Debezium change events.")
	}
	return checkSubject(subj, map[string]string{"subject": subj}, false)
}

// checkTxnSubjectStream refuses a transaction_subject of stream d that
// is not in d's JetStream stream.
func (e *Engine) checkTxnSubjectStream(ctx context.Context, d *catalog.Descriptor) error {
	subj := d.Options[exec.OptTransactionSubject]
	if subj == "" {
		return nil
	}
	js, err := e.streams.StreamOf(ctx, subj)
	if err != nil {
		return sqlerr.New(sqlerr.InternalError, "looking up the JetStream stream of subject %q: %v", subj, err)
	}
	if js != d.JSStream {
		return sqlerr.New(sqlerr.ObjectNotInPrerequisiteState, "transaction_subject %q is not in JetStream stream %s, which holds the stream's subject %q", subj, d.JSStream, d.Subject).
			WithHint("Debezium's transaction events and its change events must be in one JetStream stream, so that one order holds both: give that stream both subjects (Debezium Server: debezium.sink.nats-jetstream.subjects = '<prefix>.>').")
	}
	return nil
}
