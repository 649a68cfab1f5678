package meta

import "streamdb/sqlerr"

// What a write to a table or stream asks of NATS before it publishes
// (the frontend's checkWritable and commits): whether JetStream would
// take it at all.

// WriteError returns, when JetStream stream has stopped taking writes
// after an error of its store, the error a write to it gets (58030);
// nil otherwise. what names the write ("could not write to table
// \"t\"").
func (s *Streams) WriteError(stream, what string) *sqlerr.Error {
	return s.b.StreamWriteError(stream, what)
}

// SpaceError returns a disk-full error (53100) while the disk holding
// the embedded JetStream store has less than its reserve free; nil
// otherwise and with an external server.
func (s *Streams) SpaceError() error { return s.b.SpaceError() }

// ConnectionStatus names the state of the NATS connection ("CONNECTED",
// "RECONNECTING", ...), for the error a write gets while it is down.
func (s *Streams) ConnectionStatus() string { return s.b.NC.Status().String() }
