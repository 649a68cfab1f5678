package sql

import (
	"streamdb/sqlerr"
)

// A write that JetStream does not acknowledge fails with the SQLSTATE of
// its cause (meta.Streams.PublishFailure). Nothing unacknowledged is
// reported as written.

// checkWritable refuses a write before it is published when this server
// no longer holds its group's lease; when the disk holding the embedded
// JetStream store is full (53100: JetStream would refuse it anyway, and a
// write that reached the disk as it filled could break the stream); or
// when the connection to NATS is down (08006: the client library would
// hold the message until it reconnects or the publish times out).
func (e *Engine) checkWritable() error {
	if err := e.checkFence(); err != nil {
		return err
	}
	if err := e.streams.SpaceError(); err != nil {
		return err
	}
	if !e.link.Connected() {
		return sqlerr.New(sqlerr.ConnectionFailure, "could not write: the connection to NATS is lost (%s)", e.streams.ConnectionStatus()).
			WithHint("Nothing was written. streamdb reconnects by itself; retry once NATS is reachable.")
	}
	return nil
}

// publishFailure is the error a client gets for a publish that failed
// with err; what says what was being written ("could not write to table
// \"t\"").
func (e *Engine) publishFailure(err error, what string) error {
	return e.streams.PublishFailure(err, what)
}
