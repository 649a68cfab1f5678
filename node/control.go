package node

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"streamdb/checkpoint"
	"streamdb/cluster/control"
	"streamdb/config"
	"streamdb/exec"
)

// startControl makes a server of a cluster (config.Config.Cluster) the
// recorder of its committed epochs and checkpoints in the cluster's
// control log (cluster/control), through the broker's JetStream context
// so that each record is as durable as a table write (broker/sync.go).
// A server of no cluster records nothing.
func (n *Node) startControl() error {
	if n.cfg.Cluster == "" {
		return nil
	}
	host, _ := os.Hostname()
	id := make([]byte, 4)
	rand.Read(id)
	rec, err := control.StartRecorder(n.broker.JS, controlSource{n}, control.RecorderOptions{
		Cluster:  n.cfg.Cluster,
		Holder:   fmt.Sprintf("%s-%d-%s", host, os.Getpid(), hex.EncodeToString(id)),
		Addr:     n.cfg.Listen,
		Replicas: int(max(1, n.cfg.Int(config.NatsStreamReplicas))),
		Interval: n.cfg.Duration(config.ExecutionBarrierInterval),
		Log:      n.log,
	})
	if err != nil {
		return fmt.Errorf("--cluster: %w", err)
	}
	n.control = rec
	return nil
}

// controlSource is the server as the control log's recorder sees it.
type controlSource struct{ n *Node }

// CommittedCut reports, per pipeline, its committed position per source
// subject (the lower one for a subject it reads twice), read at an epoch
// boundary so that the positions are those of the epoch returned.
func (s controlSource) CommittedCut() (uint64, []control.Report, error) {
	var epoch uint64
	var reports []control.Report
	err := s.n.rt.AtEpochBoundary(func(cut exec.Cut) error {
		epoch = cut.Epoch
		byView := map[uint32]control.Report{}
		for _, p := range cut.Positions {
			r := byView[p.ViewID]
			if r == nil {
				r = control.Report{}
				byView[p.ViewID] = r
			}
			if cur, ok := r[p.Subject]; !ok || p.Seq < cur {
				r[p.Subject] = p.Seq
			}
		}
		for _, r := range byView {
			reports = append(reports, r)
		}
		return nil
	})
	return epoch, reports, err
}

// CheckpointsAfter lists the completed checkpoints above id after, with
// the SHA-256 of each one's metadata file (its manifest: the cut and a
// checksum of every file). One whose metadata is gone (retired since) is
// left out.
func (s controlSource) CheckpointsAfter(after uint64) ([]control.CompletedCheckpoint, error) {
	var out []control.CompletedCheckpoint
	for _, m := range s.n.coord.History() {
		if m.Kind != checkpoint.KindCheckpoint || m.Status != checkpoint.StatusCompleted || m.ID <= after {
			continue
		}
		data, err := os.ReadFile(filepath.Join(m.Dir, checkpoint.MetadataFile))
		if err != nil {
			continue
		}
		sum := sha256.Sum256(data)
		out = append(out, control.CompletedCheckpoint{ID: m.ID, Epoch: m.Epoch, Digest: hex.EncodeToString(sum[:])})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}
