package main

import (
	"fmt"

	"streamdb/cluster/control"
	"streamdb/config"
)

// replayFlags checks --replay-control and --replay-until-epoch: a replay
// reads another cluster's log over NATS and is no member of a cluster or
// group itself (its epochs are the log's, not a coordinator's).
func replayFlags(cfg *config.Config, hf haFlags) error {
	if cfg.ReplayControl == "" {
		if cfg.ReplayUntilEpoch != 0 {
			return fmt.Errorf("--replay-until-epoch needs --replay-control: name the cluster whose recorded epochs to replay")
		}
		return nil
	}
	if err := control.ValidateCluster(cfg.ReplayControl); err != nil {
		return fmt.Errorf("--replay-control: %w", err)
	}
	switch {
	case cfg.NATSURL == "":
		return fmt.Errorf("--replay-control needs --nats-url: the NATS server or cluster that holds cluster %s's control log and input", cfg.ReplayControl)
	case cfg.Cluster != "" || hf.group != "":
		return fmt.Errorf("--replay-control cannot be combined with --cluster or --ha-group: a replay follows the recorded epochs of another cluster and takes part in none")
	}
	return nil
}
