package node

import (
	"streamdb/checkpoint"
	"streamdb/exec"
)

// runtimeEpochs is the runtime as the checkpoint coordinator sees it
// (checkpoint.EpochSource): epochs and source positions, so checkpoint
// does not import exec.
type runtimeEpochs struct{ rt *exec.Runtime }

func (r runtimeEpochs) AtEpochBoundary(fn func(cut checkpoint.Cut) error) error {
	return r.rt.AtEpochBoundary(func(cut exec.Cut) error { return fn(checkpointCut(cut)) })
}

// checkpointCut copies a runtime cut into the coordinator's type.
func checkpointCut(cut exec.Cut) checkpoint.Cut {
	out := checkpoint.Cut{Epoch: cut.Epoch}
	if len(cut.Positions) > 0 {
		out.Positions = make([]checkpoint.ViewPosition, len(cut.Positions))
	}
	for i, p := range cut.Positions {
		out.Positions[i] = checkpoint.ViewPosition{ViewID: p.ViewID, View: p.View, Source: p.Source,
			Stream: p.Stream, Subject: p.Subject, Seq: p.Seq}
	}
	return out
}
