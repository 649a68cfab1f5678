package config

// The keys of Settings, for code that reads or names a setting: a typo in a
// name is a compile error, and TestKeysAreSettings checks that every key
// here is in Settings and every setting is here.
const (
	ExecutionBarrierInterval                              = "execution.barrier.interval"
	ExecutionProgressInterval                             = "execution.progress.interval"
	ExecutionCheckpointingInterval                        = "execution.checkpointing.interval"
	ExecutionCheckpointingMode                            = "execution.checkpointing.mode"
	ExecutionCheckpointingMinPause                        = "execution.checkpointing.min-pause"
	ExecutionCheckpointingTimeout                         = "execution.checkpointing.timeout"
	ExecutionCheckpointingMaxConcurrentCheckpoints        = "execution.checkpointing.max-concurrent-checkpoints"
	ExecutionCheckpointingTolerableFailedCheckpoints      = "execution.checkpointing.tolerable-failed-checkpoints"
	ExecutionCheckpointingExternalizedCheckpointRetention = "execution.checkpointing.externalized-checkpoint-retention"
	ExecutionCheckpointingPreferCheckpointForRecovery     = "execution.checkpointing.prefer-checkpoint-for-recovery"
	StateBackend                                          = "state.backend"
	StateBackendIncremental                               = "state.backend.incremental"
	StateCheckpointsViewGroups                            = "state.checkpoints.view-groups"
	StateBackendMemoryMaxSize                             = "state.backend.memory.max-size"
	StateCacheGroupsPerOperator                           = "state.cache.groups-per-operator"
	StateCacheJoinKeysPerSide                             = "state.cache.join-keys-per-side"
	StateCacheTopNRowsPerOperator                         = "state.cache.topn-rows-per-operator"
	StateMemoryBudget                                     = "state.memory.budget"
	StateBackendAsync                                     = "state.backend.async"
	ScanWatermarkAlignmentMaxDrift                        = "scan.watermark.alignment.max-drift"
	StateCheckpointsDir                                   = "state.checkpoints.dir"
	StateCheckpointsNumRetained                           = "state.checkpoints.num-retained"
	StateSavepointsDir                                    = "state.savepoints.dir"
	SSLCertFile                                           = "ssl_cert_file"
	SSLKeyFile                                            = "ssl_key_file"
	SSLRequireRemote                                      = "ssl_require_remote"
	MaxQueryLength                                        = "max_query_length"
	MaxConnections                                        = "max_connections"
	QueryMaxMemoryTotal                                   = "query.max-memory-total"
	StateEpochMaxMemory                                   = "state.epoch.max-memory"
	HTTPIdleTimeout                                       = "http.idle-timeout"
	HTTPMaxConnections                                    = "http.max-connections"
	SuperuserReservedConnections                          = "superuser_reserved_connections"
	NatsStreamReplicas                                    = "nats.stream-replicas"
	SynchronousCommit                                     = "synchronous_commit"
	HTTPPublicHost                                        = "http.public-host"
	FormatSchemaDir                                       = "format.schema-dir"
)

// keys lists every constant above, for TestKeysAreSettings.
var keys = []string{
	ExecutionBarrierInterval,
	ExecutionProgressInterval,
	ExecutionCheckpointingInterval,
	ExecutionCheckpointingMode,
	ExecutionCheckpointingMinPause,
	ExecutionCheckpointingTimeout,
	ExecutionCheckpointingMaxConcurrentCheckpoints,
	ExecutionCheckpointingTolerableFailedCheckpoints,
	ExecutionCheckpointingExternalizedCheckpointRetention,
	ExecutionCheckpointingPreferCheckpointForRecovery,
	StateBackend,
	StateBackendIncremental,
	StateCheckpointsViewGroups,
	StateBackendMemoryMaxSize,
	StateCacheGroupsPerOperator,
	StateCacheJoinKeysPerSide,
	StateCacheTopNRowsPerOperator,
	StateMemoryBudget,
	StateBackendAsync,
	ScanWatermarkAlignmentMaxDrift,
	StateCheckpointsDir,
	StateCheckpointsNumRetained,
	StateSavepointsDir,
	SSLCertFile,
	SSLKeyFile,
	SSLRequireRemote,
	MaxQueryLength,
	MaxConnections,
	QueryMaxMemoryTotal,
	StateEpochMaxMemory,
	HTTPIdleTimeout,
	HTTPMaxConnections,
	SuperuserReservedConnections,
	NatsStreamReplicas,
	SynchronousCommit,
	HTTPPublicHost,
	FormatSchemaDir,
}
