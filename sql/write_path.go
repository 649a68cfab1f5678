package sql

import (
	"streamdb/broker"
	"streamdb/meta"
	"streamdb/storage"
)

// writePath is what the table write path (table_*.go, indexes*.go,
// read_writes.go, and ALTER TABLE's rewrite of a table's rows) still
// reaches directly: the state store and the broker. Everything else in
// sql goes through meta (meta.State, meta.Streams, meta.Tables and the
// services the engine holds); tests/arch lists the files that may still
// import storage, broker, Pebble or nats.go, and that list only shrinks.
type writePath struct {
	store  *storage.Store
	broker *broker.Broker
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
