package sql

import (
	"streamdb/broker"
	"streamdb/storage"
)

// writePath is what the table write path (table_*.go, indexes*.go,
// read_writes.go, and ALTER TABLE's rewrite of a table's rows) still
// reaches directly: the state store and the broker. Everything else in
// sql goes through meta (meta.State, meta.Streams and the services the
// engine holds); tests/arch lists the files that may still import
// storage, broker, Pebble or nats.go, and that list only shrinks.
type writePath struct {
	store  *storage.Store
	broker *broker.Broker
}
