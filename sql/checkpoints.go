package sql

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"streamdb/catalog"
	"streamdb/checkpoint"
	"streamdb/sqlerr"
	"streamdb/storage"
	"streamdb/types"
)

// checkpointColumns is the schema of SHOW CHECKPOINTS and of the system
// table streamdb_checkpoints.
var checkpointColumns = []types.Column{
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

// checkpointRows lists the checkpoints this server knows, oldest first.
func (e *Engine) checkpointRows() []types.Row {
	var rows []types.Row
	for _, m := range e.coord.History() {
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
			types.NewString(formatPositions(m.Positions)), types.NewString(m.Dir), types.NewString(location), errText,
		})
	}
	return rows
}

func formatPositions(ps []checkpoint.Position) string {
	parts := make([]string, len(ps))
	for i, p := range ps {
		parts[i] = fmt.Sprintf("%s/%s=%d", p.View, p.Stream, p.Seq)
	}
	return strings.Join(parts, ", ")
}

// The names of streamdb's system tables: read-only tables computed from
// server state, each built by the function its case below calls.
const (
	sysTableCheckpoints = "streamdb_checkpoints"
	sysTableWatermarks  = "streamdb_watermarks"
	sysTableProgress    = "streamdb_progress"
	sysTableState       = "streamdb_state"
	sysTableOperators   = "streamdb_operators"
)

// systemTable returns the system table name, if it is one, as a role
// holding no privilege reads it.
func (e *Engine) systemTable(name string) (*catalog.Descriptor, func() []types.Row, bool) {
	return e.systemTableFor(name, nil)
}

// systemTableFor returns the system table name as r reads it.
func (e *Engine) systemTableFor(name string, r rowReader) (*catalog.Descriptor, func() []types.Row, bool) {
	switch name {
	case sysTableCheckpoints:
		return &catalog.Descriptor{Name: name, Kind: catalog.KindSystem, Columns: catalog.ColumnsFrom(checkpointColumns)}, e.checkpointRows, true
	case sysTableWatermarks:
		d, rows := e.watermarkTable()
		return d, rows, true
	case sysTableProgress:
		d, rows := e.progressTable()
		return d, rows, true
	case sysTableState:
		d, rows := e.stateTable()
		return d, rows, true
	case sysTableOperators:
		d, rows := e.operatorsTable()
		return d, rows, true
	case sysTableDependencies:
		d, rows := e.dependenciesTable()
		return d, rows, true
	case sysTableSources:
		d, rows := e.sourcesTable()
		return d, rows, true
	}
	return e.pgSystemTableFor(name, r)
}

func (e *Engine) checkpointNow(ctx context.Context) (string, error) {
	m, err := e.coord.Take(ctx, checkpoint.TriggerManual)
	if err != nil {
		if ctx.Err() != nil {
			return "", sqlerr.New(sqlerr.QueryCanceled, "canceling statement due to user request")
		}
		if errors.Is(err, context.DeadlineExceeded) {
			return "", sqlerr.New(sqlerr.QueryCanceled, "checkpoint %d aborted: %v", m.ID, err).
				WithHint("Raise execution.checkpointing.timeout, or find what slows checkpoints in SHOW CHECKPOINTS.")
		}
		var tooLarge *storage.ErrSnapshotTooLarge
		if asErr(err, &tooLarge) {
			return "", sqlerr.New(sqlerr.InsufficientResources, "checkpoint failed: %v", err)
		}
		return "", sqlerr.New(sqlerr.InternalError, "checkpoint %d failed: %v", m.ID, err)
	}
	return "CHECKPOINT", nil
}
