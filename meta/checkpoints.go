package meta

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"streamdb/checkpoint"
	"streamdb/sqlerr"
	"streamdb/storage"
	"streamdb/types"
)

// Coordinator is the checkpoint coordinator (*checkpoint.Coordinator) as
// meta's services and the frontend use it: what Points, the Purger and
// the DroppedStreams collector need, and the pauses and savepoints of
// statements that replace state (ALTER MATERIALIZED VIEW, RENAME,
// CREATE INDEX, ALTER TABLE). The checkpoints statements take go
// through Node (Checkpoint, CheckpointDDL, CheckpointRollback).
type Coordinator interface {
	PointsCoordinator
	PurgeCoordinator
	DroppedStreamsCoordinator
	// Healthy reports whether no more checkpoints than tolerated failed
	// in a row, and how many did.
	Healthy() (bool, int)
	// DeleteAll removes every completed checkpoint not in use
	// (delete_on_cancellation).
	DeleteAll()
}

// Checkpoint takes a checkpoint for the CHECKPOINT statement and returns
// once it is complete. Its errors are as the client sees them: a
// cancelled statement or a checkpoint past its timeout is 57014, a memory
// backend's state over its limit 53000.
func (n *Node) Checkpoint(ctx context.Context) error {
	m, err := n.n.Coordinator().Take(ctx, checkpoint.TriggerManual)
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		return sqlerr.New(sqlerr.QueryCanceled, "canceling statement due to user request")
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return sqlerr.New(sqlerr.QueryCanceled, "checkpoint %d aborted: %v", m.ID, err).
			WithHint("Raise execution.checkpointing.timeout, or find what slows checkpoints in SHOW CHECKPOINTS.")
	}
	var tooLarge *storage.ErrSnapshotTooLarge
	if errors.As(err, &tooLarge) {
		return sqlerr.New(sqlerr.InsufficientResources, "checkpoint failed: %v", err)
	}
	return sqlerr.New(sqlerr.InternalError, "checkpoint %d failed: %v", m.ID, err)
}

// CheckpointDDL takes the checkpoint that records a catalog change
// before its statement returns, so that recovery from the newest
// checkpoint never loses an acknowledged CREATE or DROP.
func (n *Node) CheckpointDDL(ctx context.Context) error {
	_, err := n.n.Coordinator().Take(ctx, checkpoint.TriggerDDL)
	return err
}

// CheckpointRollback takes the checkpoint that makes a ROLLBACK TO
// survive a crash, after ReplaceState.
func (n *Node) CheckpointRollback(ctx context.Context) error {
	_, err := n.n.Coordinator().Take(ctx, checkpoint.TriggerRollback)
	return err
}

// CheckpointColumns is the schema of SHOW CHECKPOINTS and of the system
// table streamdb_checkpoints.
var CheckpointColumns = []types.Column{
	{Name: "id", Type: types.Int8},
	{Name: "status", Type: types.Text},
	{Name: "trigger", Type: types.Text},
	{Name: "epoch", Type: types.Int8},
	{Name: "started_at", Type: types.Timestamptz},
	{Name: "completed_at", Type: types.Timestamptz},
	{Name: "duration_ms", Type: types.Float8},
	{Name: "pause_ms", Type: types.Float8},
	{Name: "size_bytes", Type: types.Int8},
	{Name: "new_bytes", Type: types.Int8},
	{Name: "positions", Type: types.Text},
	{Name: "directory", Type: types.Text},
	// location is where the checkpoint is kept for restores on another
	// machine: its bucket object (nats-object://BUCKET/meta/...) when
	// state.checkpoints.dir names a bucket, else the local directory.
	{Name: "location", Type: types.Text},
	{Name: "error", Type: types.Text},
}

// CheckpointRows lists the checkpoints this server knows, oldest first,
// as rows of CheckpointColumns.
func (n *Node) CheckpointRows() []types.Row {
	var rows []types.Row
	for _, m := range n.n.Coordinator().History() {
		if m.Status == "deleted" {
			continue
		}
		completed := types.Null
		if !m.CompletedAt.IsZero() {
			completed = types.NewTime(m.CompletedAt)
		}
		location := m.Location
		if location == "" {
			location = m.Dir
		}
		errText := types.Null
		if m.Error != "" {
			errText = types.NewString(m.Error)
		}
		rows = append(rows, types.Row{
			types.NewInt(int64(m.ID)), types.NewString(m.Status), types.NewString(m.Trigger),
			types.NewInt(int64(m.Epoch)), types.NewTime(m.StartedAt), completed,
			types.NewFloat(float64(time.Duration(m.Duration).Microseconds()) / 1000),
			types.NewFloat(float64(time.Duration(m.Pause).Microseconds()) / 1000),
			types.NewInt(m.SizeBytes), types.NewInt(m.NewBytes),
			types.NewString(FormatPositions(m.Positions)), types.NewString(m.Dir), types.NewString(location), errText,
		})
	}
	return rows
}

// FormatPositions shows a point's source positions as SHOW CHECKPOINTS
// and SHOW SAVEPOINTS do: view/stream=seq, comma-separated.
func FormatPositions(ps []checkpoint.Position) string {
	parts := make([]string, len(ps))
	for i, p := range ps {
		parts[i] = fmt.Sprintf("%s/%s=%d", p.View, p.Stream, p.Seq)
	}
	return strings.Join(parts, ", ")
}
