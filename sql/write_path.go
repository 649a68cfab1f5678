package sql

import (
	"streamdb/meta"
)

// writePath is the state store and the NATS connection the engine hands
// to meta's table changelog writer (newTables). Nothing in sql calls
// them: reads and writes of state go through meta.State, meta.TableState
// and meta.Tables, and JetStream through meta.Streams (tests/arch holds
// sql to importing none of storage, broker, Pebble or nats.go).
type writePath struct {
	store  *meta.StateStore
	broker *meta.Broker
}

// newTables makes the engine's table changelog writer (meta.Tables) over
// its store, broker and runtime; the writer asks the engine for the
// lease, the acknowledged positions reads wait for, and the wait for a
// table to apply its changelog.
func (e *Engine) newTables() *meta.Tables {
	return meta.NewTables(meta.TablesConfig{
		Store:        e.store,
		Broker:       e.broker,
		Runtime:      e.rt,
		Streams:      e.streams,
		Log:          e.log,
		Fence:        e.host.CheckFence,
		Acknowledged: e.acknowledged,
		WaitTableAt:  e.waitTableAt,
		MaxPayload:   e.link.MaxPayload,
	})
}
