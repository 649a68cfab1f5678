package sql

import (
	"context"

	"streamdb/sqlerr"
)

// checkFence refuses a write once this server no longer holds its group's
// lease (node.Fence): the engine checks it before every table or stream
// write is published.
func (e *Engine) checkFence() error {
	if err := e.node.CheckFence(); err != nil {
		return fencedError()
	}
	return nil
}

// fencedRoles stores the roles in the group's replica only while the
// lease is held, as every other commit.
type fencedRoles struct {
	check func() error // node.Node.CheckFence
	r     RoleReplica
}

func (f fencedRoles) Load(ctx context.Context) ([]byte, error) { return f.r.Load(ctx) }

func (f fencedRoles) Store(ctx context.Context, data []byte) error {
	if f.check() != nil {
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
