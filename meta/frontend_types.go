package meta

import (
	"github.com/cockroachdb/pebble/v2"

	"streamdb/broker"
	"streamdb/checkpoint"
	"streamdb/storage"
)

// The types of other packages that meta's API hands the frontend (in
// Coordinator's methods and Node's), under names of meta's: the frontend,
// which imports neither checkpoint nor (outside its table write path)
// storage and broker, names them through these, and so do its unit
// tests' fakes of the node and of the checkpoint coordinator.
type (
	// CheckpointMeta describes one completed checkpoint or savepoint.
	CheckpointMeta = checkpoint.Meta
	// CheckpointPosition is a source position a retained point holds.
	CheckpointPosition = checkpoint.Position
	// CheckpointRemote is a bucket checkpoints or savepoints are copied to.
	CheckpointRemote = checkpoint.Remote
	// CheckpointSettings are the checkpointing settings in force.
	CheckpointSettings = checkpoint.Settings
	// StateStore is the Pebble state store.
	StateStore = storage.Store
	// StateBatch is a batch of writes to it, committed whole
	// (DDL.RestartWith).
	StateBatch = pebble.Batch
	// Broker is the server's NATS connection.
	Broker = broker.Broker
)
