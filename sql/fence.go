package sql

import (
	"context"
	"time"

	"streamdb/sqlerr"
)

// A Fence says whether this server may still commit: a server of an
// --ha-group may only while it holds its group's lease (package ha). The
// engine checks it before every table or stream write is published and
// before every checkpoint is committed, so a server that lost the lease
// (paused past it, or cut off from NATS) commits nothing more and steps
// down.
type Fence interface {
	// Check answers from this server's own clock, without a round trip.
	Check() error
	// Confirm proves the lease at the NATS server (a compare-and-set).
	Confirm(ctx context.Context) error
}

// fenceConfirmTimeout bounds Confirm before a checkpoint commit.
const fenceConfirmTimeout = 2 * time.Second

// checkFence refuses a write once the lease is lost.
func (e *Engine) checkFence() error {
	if e.fence == nil {
		return nil
	}
	if err := e.fence.Check(); err != nil {
		return fencedError()
	}
	return nil
}

// confirmFence runs before each checkpoint commit (checkpoint.Settings).
func (e *Engine) confirmFence() error {
	if e.fence == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), fenceConfirmTimeout)
	defer cancel()
	return e.fence.Confirm(ctx)
}

// fencedRoles stores the roles in the group's replica only while the
// lease is held, as every other commit.
type fencedRoles struct {
	fence Fence
	r     RoleReplica
}

func (f fencedRoles) Load(ctx context.Context) ([]byte, error) { return f.r.Load(ctx) }

func (f fencedRoles) Store(ctx context.Context, data []byte) error {
	if f.fence != nil && f.fence.Check() != nil {
		return fencedError()
	}
	if err := f.r.Store(ctx, data); err != nil {
		return sqlerr.New(sqlerr.InternalError, "could not store the roles in the group's bucket; nothing was changed: %v", err).
			WithHint("Retry once NATS is reachable.")
	}
	return nil
}

func fencedError() error {
	return sqlerr.New(sqlerr.CannotConnectNow, "could not write: this server no longer holds its group's lease and is stepping down to standby; nothing was written").
		WithHint("Reconnect with every server of the group in the connection string (host=a,b): the client finds the active one.")
}

// sinkGate is the newest epoch sinks may publish: that of the newest
// checkpoint, or none once the lease is lost (sinks are fenced before
// every round of publishing).
func (e *Engine) sinkGate() uint64 {
	if e.checkFence() != nil {
		return 0
	}
	return e.coord.DurableEpoch()
}
