package meta

import (
	"context"

	"streamdb/checkpoint"
)

// Coordinator is the checkpoint coordinator (*checkpoint.Coordinator) as
// meta's services and the frontend use it: what Points, the Purger and
// the DroppedStreams collector need, and the pauses and savepoints of
// statements that replace state (ALTER MATERIALIZED VIEW, RENAME,
// CREATE INDEX, ALTER TABLE).
type Coordinator interface {
	PointsCoordinator
	PurgeCoordinator
	DroppedStreamsCoordinator
	// Take takes a checkpoint, trigger saying why.
	Take(ctx context.Context, trigger string) (*checkpoint.Meta, error)
	// Healthy reports whether no more checkpoints than tolerated failed
	// in a row, and how many did.
	Healthy() (bool, int)
	// DeleteAll removes every completed checkpoint not in use
	// (delete_on_cancellation).
	DeleteAll()
}
