package config

// Replaying makes a server a replay of another cluster's recorded epochs
// (node/replay.go, docs/cluster.md "Replay"): its runtime takes each
// epoch's cuts from the cluster's control log instead of its ticker.
type Replaying struct {
	// ReplayControl is --replay-control: the cluster whose control log
	// this server's epochs follow (with --nats-url). Empty: none.
	ReplayControl string
	// ReplayUntilEpoch is --replay-until-epoch: the last recorded epoch
	// to follow (0: follow the log as it grows).
	ReplayUntilEpoch uint64
}
