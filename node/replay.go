package node

import (
	"context"
	"errors"

	"streamdb/cluster/control"
	"streamdb/exec"
)

// startReplay makes the runtime follow the committed epochs recorded in
// the control log of cluster cfg.ReplayControl (--replay-control), up to
// cfg.ReplayUntilEpoch when set: each epoch takes exactly the recorded
// cuts. It runs before the catalog is loaded, so that every reader is
// built to follow. The catalog is this server's own: a replay holds the
// views that were created on it (docs/cluster.md, "Replay").
func (n *Node) startReplay() error {
	if n.cfg.ReplayControl == "" {
		return nil
	}
	f, err := control.NewFollower(n.broker.JS, n.cfg.ReplayControl, n.cfg.ReplayUntilEpoch)
	if err != nil {
		return err
	}
	n.follower = f
	n.rt.Follow(logEpochs{f})
	n.log.Info("replaying the recorded epochs of a cluster", "cluster", n.cfg.ReplayControl, "until_epoch", n.cfg.ReplayUntilEpoch)
	return nil
}

// logEpochs is the control log as the runtime's epoch source.
type logEpochs struct{ f *control.Follower }

func (l logEpochs) Next(ctx context.Context, after uint64) (exec.FollowedEpoch, error) {
	b, err := l.f.Next(ctx, after)
	if errors.Is(err, control.ErrFollowEnd) {
		return exec.FollowedEpoch{}, exec.ErrEpochsEnd
	}
	if err != nil {
		return exec.FollowedEpoch{}, err
	}
	return exec.FollowedEpoch{Epoch: b.Epoch, Cuts: b.Cuts}, nil
}
