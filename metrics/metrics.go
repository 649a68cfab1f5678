// Package metrics holds the server's Prometheus metrics: one registry per
// process, the collectors the engine's packages update where things happen
// (an epoch commits, a checkpoint ends, a query finishes), and collectors
// that read a component's own figures when scraped (Pebble, views).
//
// Names follow the Prometheus conventions: a streamdb_ prefix, base units
// (seconds, bytes), _total for counters, labels only of bounded
// cardinality (view and stream names, which are catalog objects).
package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Registry is what /metrics serves. Packages register on it at init; the
// server registers scrape-time collectors (Pebble, views) when it opens.
var Registry = prometheus.NewRegistry()

// durationBuckets cover a barrier interval (milliseconds) up to a slow
// checkpoint of a large state (minutes).
var durationBuckets = prometheus.ExponentialBuckets(0.0005, 4, 12)

var (
	// EpochsCommitted counts epochs committed to the state store.
	EpochsCommitted = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "streamdb_epochs_committed_total",
		Help: "Epochs whose state changes and source positions were committed to Pebble as one batch.",
	})
	// EpochCommitSeconds is how long each epoch's Pebble commit took.
	EpochCommitSeconds = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "streamdb_epoch_commit_seconds",
		Help:    "Time to commit one epoch's batch to Pebble.",
		Buckets: durationBuckets,
	})
	// CheckpointsCompleted and CheckpointsFailed count checkpoints (not
	// savepoints) by how they ended (a timed-out one counts as failed).
	CheckpointsCompleted = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "streamdb_checkpoints_completed_total",
		Help: "Checkpoints completed (savepoints not included).",
	})
	CheckpointsFailed = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "streamdb_checkpoints_failed_total",
		Help: "Checkpoints that failed or timed out (savepoints not included).",
	})
	// StateDamageRecoveries counts starts that found the live state's
	// files damaged and restored the newest intact checkpoint instead.
	StateDamageRecoveries = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "streamdb_state_damage_recoveries_total",
		Help: "Starts of this process that found the live state's files damaged (Pebble checksum errors) and recovered from the newest intact checkpoint or savepoint.",
	})
	// CheckpointDuration is the time from a checkpoint's start to its end.
	CheckpointDuration = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "streamdb_checkpoint_duration_seconds",
		Help:    "Time from a checkpoint's start to its completion.",
		Buckets: durationBuckets,
	})
	// CheckpointSize is the size of the newest completed checkpoint, and
	// CheckpointNewBytes what it wrote that the one before it did not hold.
	CheckpointSize = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "streamdb_checkpoint_size_bytes",
		Help: "Size of the newest completed checkpoint.",
	})
	CheckpointNewBytes = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "streamdb_checkpoint_new_bytes",
		Help: "Bytes the newest completed checkpoint wrote that its predecessor did not hold.",
	})
	// ViewRowsIn and ViewRowsOut count, per view (and per table, whose
	// changelog runs as a pipeline too), the rows its sources decoded and
	// the changes its materialize operator received. A view's series go
	// when it is dropped (ForgetView).
	ViewRowsIn = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "streamdb_view_rows_in_total",
		Help: "Rows the sources of a view (or table) handed to its dataflow since the server started.",
	}, []string{"view"})
	ViewRowsOut = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "streamdb_view_rows_out_total",
		Help: "Changes (inserts and deletes) a view's (or table's) dataflow wrote to its state since the server started.",
	}, []string{"view"})
	// OperatorRowsOut counts, per operator of a view's dataflow (labelled
	// by its operator id, as EXPLAIN ALTER and streamdb_operators show
	// it), the changes it sent downstream.
	OperatorRowsOut = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "streamdb_operator_rows_out_total",
		Help: "Changes (inserts and deletes) an operator of a view's dataflow sent downstream since the server started.",
	}, []string{"view", "operator"})
	// JoinStateRows is the number of rows each join operator of a view
	// holds in memory (its cache over Pebble, see exec's joinCache).
	JoinStateRows = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "streamdb_join_state_rows",
		Help: "Rows (each distinct row once) a join operator of a view keeps in memory; the rest of its state is in Pebble.",
	}, []string{"view", "operator"})
	// TopNStateRows is the number of rows each top-N operator over a
	// retracting input keeps in memory (its cache over Pebble, see exec's
	// topNCache).
	TopNStateRows = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "streamdb_topn_state_rows",
		Help: "Rows (each distinct row once) a top-N operator of a view keeps in memory; the rest of its state is in Pebble.",
	}, []string{"view", "operator"})
	// SinkMessages, SinkPublishedEpoch and SinkPendingEpochs follow each
	// sink (CREATE SINK): messages JetStream acknowledged, the epoch of the
	// newest, and the outbox entries (epochs) committed but not yet
	// acknowledged, its lag. A sink's series go when it is dropped.
	SinkMessages = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "streamdb_sink_messages_total",
		Help: "Messages a sink published and JetStream acknowledged since the server started.",
	}, []string{"sink"})
	SinkPublishedEpoch = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "streamdb_sink_published_epoch",
		Help: "Epoch of the newest message a sink published.",
	}, []string{"sink"})
	SinkPendingEpochs = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "streamdb_sink_pending_epochs",
		Help: "Epochs of changes a sink holds that JetStream has not acknowledged yet (its lag).",
	}, []string{"sink"})
	// StateMemoryBudget is state.memory.budget; StateCaches the caches
	// that share it; StateCacheLimit the entries a cache of a kind that
	// wants more may keep under it and its kind's setting (exec's
	// memoryBudget).
	StateMemoryBudget = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "streamdb_state_memory_budget_bytes",
		Help: "state.memory.budget: the bytes the state caches of all running views share (0: no budget).",
	})
	StateCaches = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "streamdb_state_caches",
		Help: "State caches (aggregate groups and view rows, join sides, top-N rows) of running views, which share state.memory.budget.",
	})
	// BlockCacheLimit is the bytes Pebble's block cache may hold: its
	// share of state.memory.budget.
	BlockCacheLimit = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "streamdb_pebble_block_cache_limit_bytes",
		Help: "Bytes Pebble's block cache may hold: a quarter of state.memory.budget, or 64 MiB without a budget.",
	})
	StateCacheLimit = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "streamdb_state_cache_limit_entries",
		Help: "Entries a state cache of a kind that wants more (a join: each side) keeps in memory at most: its share of state.memory.budget or its setting, whichever is lower (caches that hold little leave their share to the others).",
	}, []string{"kind"})
	// Connections is the number of open client connections.
	Connections = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "streamdb_connections",
		Help: "Open PostgreSQL protocol connections.",
	})
	// SessionsForwarded counts the client connections a cluster member
	// relayed to its cluster's coordinator, by how they ended up: "session"
	// (a session, in the clear or over TLS end to end) or "cancel" (a
	// CancelRequest passed on).
	SessionsForwarded = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "streamdb_sessions_forwarded_total",
		Help: "Client connections this cluster member relayed to the cluster's coordinator: what=session (a session) or what=cancel (a CancelRequest).",
	}, []string{"what"})
	// Queries counts statements by outcome: "ok", or the class of the
	// SQLSTATE they failed with (e.g. "22" data exception, "57" canceled).
	Queries = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "streamdb_queries_total",
		Help: "Statements executed, by outcome: ok, or the two-character SQLSTATE class of the error.",
	}, []string{"outcome"})
	// TransactionSpills counts the times a transaction block moved what
	// it held in memory to its scratch store on disk, by what it moved:
	// a table's changes or a stream's rows.
	TransactionSpills = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "streamdb_transaction_spills_total",
		Help: "Times a transaction block moved its changes to a table (what=table) or its rows for a stream (what=stream) from memory to disk, past transaction_spill_memory.",
	}, []string{"what"})
	// TransactionSpillReads counts the times a transaction block read a
	// table's spilled changes back into memory: the table's unique or
	// foreign keys changed in the block since they spilled.
	TransactionSpillReads = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "streamdb_transaction_spill_reads_total",
		Help: "Times a transaction block read its spilled changes to a table back into memory (the table's unique or foreign keys changed in the block).",
	})
	// BlockStreamedChanges counts the UPDATE and DELETE statements of
	// transaction blocks that streamed their changes into the block a
	// batch at a time (the others read the rows they change first).
	BlockStreamedChanges = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "streamdb_block_streamed_changes_total",
		Help: "UPDATE and DELETE statements inside transaction blocks that streamed their changes into the block a batch at a time, without holding the rows they change.",
	})
)

func init() {
	Registry.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		EpochsCommitted, EpochCommitSeconds,
		CheckpointsCompleted, CheckpointsFailed, StateDamageRecoveries, CheckpointDuration, CheckpointSize, CheckpointNewBytes,
		Connections, SessionsForwarded, Queries, TransactionSpills, TransactionSpillReads, BlockStreamedChanges, ViewRowsIn, ViewRowsOut, OperatorRowsOut, JoinStateRows, TopNStateRows,
		SinkMessages, SinkPublishedEpoch, SinkPendingEpochs,
		StateMemoryBudget, StateCaches, StateCacheLimit, BlockCacheLimit,
	)
}

// ForgetView drops a view's series (it was dropped, or stopped for good).
func ForgetView(name string) {
	ViewRowsIn.DeleteLabelValues(name)
	ViewRowsOut.DeleteLabelValues(name)
	OperatorRowsOut.DeletePartialMatch(prometheus.Labels{"view": name})
	JoinStateRows.DeletePartialMatch(prometheus.Labels{"view": name})
	TopNStateRows.DeletePartialMatch(prometheus.Labels{"view": name})
}

// ForgetSink drops a sink's series.
func ForgetSink(name string) {
	SinkMessages.DeleteLabelValues(name)
	SinkPublishedEpoch.DeleteLabelValues(name)
	SinkPendingEpochs.DeleteLabelValues(name)
}

// QueryOutcome is the outcome label of a statement that ended with the
// given SQLSTATE ("" for success).
func QueryOutcome(sqlstate string) string {
	if sqlstate == "" {
		return "ok"
	}
	if len(sqlstate) >= 2 {
		return sqlstate[:2]
	}
	return "XX"
}
