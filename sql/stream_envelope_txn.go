package sql

import (
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
