package sql

import "streamdb/meta"

// The JetStream streams of dropped tables are collected by meta
// (meta/dropped_streams.go) once no retained checkpoint or savepoint holds
// the table; DDL tells it what it drops and creates.

// newDroppedStreams returns the collector of e's dropped tables' streams;
// a collection holds ddlMu.
func (e *Engine) newDroppedStreams() *meta.DroppedStreams {
	return meta.NewDroppedStreams(meta.DroppedStreamsConfig{
		Catalog: &e.ddlMu, Live: e.catalogObjects, Broker: e.node.Broker(), Coord: e.coord,
		Settings: e.node.CheckpointSettings, DataDir: e.node.DataDir(), Log: e.log,
	})
}

// startDroppedStreamGC starts the collector unless it runs or has nothing
// to do.
func (e *Engine) startDroppedStreamGC() { e.dropped.Start() }

// collectDroppedStreamsLocked deletes the pending streams nothing holds;
// the caller holds ddlMu.
func (e *Engine) collectDroppedStreamsLocked() { e.dropped.CollectLocked() }
