package sql

import (
	"context"

	"streamdb/catalog"
	"streamdb/meta"
	"streamdb/types"
)

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
		return &catalog.Descriptor{Name: name, Kind: catalog.KindSystem, Columns: catalog.ColumnsFrom(meta.CheckpointColumns)}, e.node.CheckpointRows, true
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
	case sysTableNodes:
		d, rows := e.nodesTable()
		return d, rows, true
	}
	return e.pgSystemTableFor(name, r)
}

// checkpointNow is the CHECKPOINT statement (meta.Node.Checkpoint).
func (e *Engine) checkpointNow(ctx context.Context) (string, error) {
	if err := e.node.Checkpoint(ctx); err != nil {
		return "", err
	}
	return "CHECKPOINT", nil
}
