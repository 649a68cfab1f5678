package node

import (
	"context"
	"time"
)

// A Fence says whether this server may still commit: a server of an
// --ha-group may only while it holds its group's lease (package ha). The
// engine checks it before every table or stream write is published, the
// coordinator before every checkpoint is committed or uploaded and the
// publisher before every round of sink messages, so a server that lost
// the lease (paused past it, or cut off from NATS) commits nothing more
// and steps down.
type Fence interface {
	// Check answers from this server's own clock, without a round trip.
	Check() error
	// Confirm proves the lease at the NATS server (a compare-and-set).
	Confirm(ctx context.Context) error
}

// fenceConfirmTimeout bounds Confirm before a checkpoint commit.
const fenceConfirmTimeout = 2 * time.Second

// Fenced reports whether the server was opened with a fence (a member of
// an --ha-group).
func (n *Node) Fenced() bool { return n.fence != nil }

// CheckFence is the fence's Check: nil while this server may commit, and
// always for a server of no group.
func (n *Node) CheckFence() error {
	if n.fence == nil {
		return nil
	}
	return n.fence.Check()
}

// confirmFence runs before each checkpoint commit and upload.
func (n *Node) confirmFence() error {
	if n.fence == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), fenceConfirmTimeout)
	defer cancel()
	return n.fence.Confirm(ctx)
}

// sinkGate is the newest epoch sinks may publish: that of the newest
// checkpoint, or none once the lease is lost (sinks are fenced before
// every round of publishing).
func (n *Node) sinkGate() uint64 {
	if n.CheckFence() != nil {
		return 0
	}
	return n.coord.DurableEpoch()
}
