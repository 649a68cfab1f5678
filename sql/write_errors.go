package sql

import (
	"streamdb/broker"
	"streamdb/sqlerr"
)

// A write that JetStream does not acknowledge fails with the SQLSTATE of
// its cause (broker.Classify): 53100 when the disk is full, 08006 when
// NATS cannot be reached, 08007 when no acknowledgement came (the
// message may have been stored), and so on. Nothing unacknowledged is
// reported as written.

// checkWriteSpace refuses a write before it is published when the disk
// holding the embedded JetStream store is full (53100): JetStream would
// refuse it anyway, and a write that reached the disk as it filled could
// break the stream.
func (e *Engine) checkWriteSpace() error {
	return e.broker.SpaceError()
}

// publishFailure is the error a client gets for a publish that failed
// with err; what says what was being written ("could not write to table
// \"t\"").
func (e *Engine) publishFailure(err error, what string) error {
	if full := e.broker.SpaceError(); full != nil {
		// Whatever JetStream said (a timeout from a store that hit the
		// disk's end), the cause is the disk.
		return full
	}
	if se := broker.Classify(err, what); se != nil {
		return se
	}
	return sqlerr.New(sqlerr.IOError, "%s: %v", what, err).
		WithHint("Nothing was written; check that JetStream is reachable and has room.")
}
