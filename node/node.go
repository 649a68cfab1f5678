// Package node is the lifecycle of one server's components: it opens NATS
// (embedded or external) and the Pebble state (restored from a checkpoint
// when asked to or after an unclean shutdown), builds the runtime, the
// checkpoint coordinator with its buckets and the sink publisher, owns the
// server's settings, swaps the state for a rollback and shuts everything
// down. The SQL engine (package sql) runs over an opened Node.
package node

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"

	"streamdb/broker"
	"streamdb/checkpoint"
	"streamdb/cluster/control"
	"streamdb/config"
	"streamdb/exec"
	"streamdb/sink"
	"streamdb/storage"
)

// Node is one server's components: broker, state store, runtime,
// checkpoint coordinator and sink publisher, and its settings.
//
// Lock order: cfgMu is the node's own lock. It is a leaf for the engine
// above (sql.Engine takes it, through Setting, CheckpointSettings and
// ChangeSetting, under any of its locks and takes none of them under
// it). ChangeSetting holds it while it applies a setting to the runtime
// and the broker, whose internal locks come after it; the coordinator
// takes it through CheckpointSettings, also under its own Exclusive.
// ReplaceState takes the coordinator's Exclusive: its caller may hold
// locks above that (sql.Engine's ddlMu and stateMu), never cfgMu.
type Node struct {
	cfg   *config.Config
	cfgMu sync.RWMutex // guards cfg.Values, which SET and ALTER SYSTEM SET change

	log       *slog.Logger
	broker    *broker.Broker
	store     *storage.Store
	rt        *exec.Runtime
	coord     *checkpoint.Coordinator
	publisher *sink.Publisher
	// fence, when not nil, says whether this server may still commit.
	fence Fence
	// closing is closed by Close (ends watchDamage).
	closing chan struct{}
	// queryPool bounds the rows of all ad-hoc queries together
	// (query.max-memory-total).
	queryPool exec.MemoryPool
	// control records committed epochs and checkpoints in the cluster's
	// control log (control.go); nil for a server of no cluster.
	control *control.Recorder
	// follower reads the epochs a --replay-control server follows
	// (replay.go); nil otherwise.
	follower *control.Follower
}

// Options are what a server of an --ha-group adds to Open.
type Options struct {
	// Fence, when not nil, says whether this server may still commit.
	Fence Fence
	// Ctx, when cancelled (a signal while the server takes over), stops
	// the download of the checkpoint to restore; Open then fails.
	Ctx context.Context
	// Damaged, when not nil, receives the corruption Pebble finds in the
	// live state's files. The node has stopped checkpoints and written
	// damageMarker by then; the process must restart (without a clean
	// shutdown, which would go on using the damaged state), and the next
	// start recovers from the newest intact checkpoint.
	Damaged chan<- error
}

// runningMarker exists in the data directory while a server runs; finding
// it at start means the last run did not shut down cleanly.
const runningMarker = "RUNNING"

// Open opens the broker (embedded NATS unless cfg.NATSURL is set), the
// state store (recovered from a checkpoint when asked to or after an
// unclean shutdown), the runtime and the checkpoint coordinator with its
// buckets. Nothing runs yet: the engine loads its catalog, then calls
// MarkRunning and Start. Close undoes Open.
func Open(cfg *config.Config, log *slog.Logger, opts Options) (*Node, error) {
	ctx := context.Background()
	if opts.Ctx != nil {
		ctx = opts.Ctx
	}
	if cfg.Cluster != "" {
		if err := control.ValidateCluster(cfg.Cluster); err != nil {
			return nil, fmt.Errorf("--cluster (or %s): %w", config.ClusterEnv, err)
		}
	}
	if err := os.MkdirAll(cfg.DataDir, 0o755); err != nil {
		return nil, fmt.Errorf("create data directory: %w", err)
	}
	b, err := openBroker(cfg, log)
	if err != nil {
		return nil, err
	}
	store, err := openState(ctx, cfg, b, log)
	if err != nil {
		b.Close()
		return nil, err
	}
	n := &Node{cfg: cfg, log: log, broker: b, store: store, fence: opts.Fence, closing: make(chan struct{})}
	go n.watchDamage(opts.Damaged)
	n.rt = exec.NewRuntime(store, b, log, cfg.Duration(config.ExecutionBarrierInterval))
	n.rt.SetAligned(cfg.Values[config.ExecutionCheckpointingMode] != "at_least_once")
	n.rt.SetGroupCache(cfg.Int(config.StateCacheGroupsPerOperator))
	n.rt.SetJoinCache(cfg.Int(config.StateCacheJoinKeysPerSide))
	n.rt.SetTopNCache(cfg.Int(config.StateCacheTopNRowsPerOperator))
	n.rt.SetMemoryBudget(cfg.Int(config.StateMemoryBudget))
	n.queryPool.SetLimit(cfg.Int(config.QueryMaxMemoryTotal))
	n.rt.SetEpochMemoryLimit(cfg.Int(config.StateEpochMaxMemory))
	n.rt.SetAlignmentDrift(cfg.Duration(config.ScanWatermarkAlignmentMaxDrift))
	if n.coord, err = checkpoint.NewCoordinator(n.CheckpointSettings, store, runtimeEpochs{n.rt}, log); err != nil {
		store.Close()
		b.Close()
		return nil, err
	}
	if err := n.openRemotes(); err != nil {
		store.Close()
		b.Close()
		return nil, err
	}
	if n.fence != nil {
		n.coord.SetUploadFence(n.confirmFence)
	}
	if err := n.startReplay(); err != nil {
		store.Close()
		b.Close()
		return nil, fmt.Errorf("--replay-control: %w", err)
	}
	return n, nil
}

// openBroker starts the embedded NATS server, or connects to the one
// cfg.NATSURL names, and applies the broker's settings.
func openBroker(cfg *config.Config, log *slog.Logger) (*broker.Broker, error) {
	var b *broker.Broker
	var err error
	if cfg.NATSURL != "" {
		if b, err = broker.Connect(cfg.NATSURL); err == nil {
			log.Warn("with --nats-url, streamdb sets no NATS permissions: tables' changelogs (subjects streamdb.table.> and tables' own subjects) and their JetStream streams are only as safe as that server's permissions make them")
		}
	} else {
		var pw string
		if pw, err = cfg.NATSProducerPassword(); err == nil {
			b, err = broker.StartEmbeddedWith(broker.EmbeddedOptions{
				Listen: cfg.NATSListen, StoreDir: cfg.NATSDir(), CredentialsDir: cfg.DataDir, ProducerPassword: pw,
			})
		}
		if err == nil {
			log.Info("embedded NATS: tables' subjects are written by streamdb only", "producers_connect", b.ProducerAccess())
		}
	}
	if err != nil {
		return nil, err
	}
	b.SetStreamReplicas(int(cfg.Int(config.NatsStreamReplicas)))
	if warning := b.SetSynchronousCommit(cfg.SynchronousCommit()); warning != "" {
		log.Warn(warning)
	}
	log.Info("durability of acknowledged writes", config.SynchronousCommit, cfg.Values[config.SynchronousCommit], "survives", b.SyncMode())
	return b, nil
}

// MarkRunning writes the running marker in the data directory, once the
// engine has loaded its catalog: from then on a start that finds it
// recovers from a checkpoint.
func (n *Node) MarkRunning() error {
	return storage.WriteFileSynced(filepath.Join(n.cfg.DataDir, runningMarker), []byte(fmt.Sprint(os.Getpid())), 0o644)
}

// Start starts the runtime's barriers, periodic checkpoints, the sink
// publisher and, for a server of a cluster, the control log's recorder.
func (n *Node) Start() {
	n.rt.Start()
	n.coord.Start()
	n.publisher = sink.NewPublisher(n.store, n.broker.JS, n.sinkGate, n.log)
	n.publisher.Start()
	if err := n.startControl(); err != nil {
		n.log.Error("the control log is not recorded", "err", err)
	}
}

// Abandon closes what Open opened when the engine fails to start over it
// (before Start).
func (n *Node) Abandon() {
	n.rt.Close()
	n.store.Close()
	n.broker.Close()
}

// Close shuts down cleanly: the publisher and periodic checkpoints stop,
// views stop, the memory backend writes a final snapshot, checkpoints are
// kept or deleted as externalized-checkpoint-retention says, and the
// running marker goes once the store closed cleanly.
func (n *Node) Close() error {
	close(n.closing)
	if n.control != nil {
		n.control.Close()
	}
	n.publisher.Stop()
	n.coord.StopPeriodic()
	n.rt.Close()
	if n.follower != nil {
		n.follower.Close() // after the runtime: its goroutine reads it
	}
	s := n.CheckpointSettings()
	if s.Backend == "memory" {
		if _, err := n.coord.Take(context.Background(), checkpoint.TriggerShutdown); err != nil {
			n.log.Error("final snapshot of the memory backend failed", "err", err)
		}
	}
	n.coord.Stop() // waits for checkpoints that sessions started
	if s.Backend != "memory" && !s.RetainOnCancellation {
		n.coord.DeleteAll()
	}
	err := n.store.Close()
	n.broker.Close()
	if err == nil {
		os.Remove(filepath.Join(n.cfg.DataDir, runningMarker))
	}
	return err
}

// Broker is the server's NATS connection (and embedded server).
func (n *Node) Broker() *broker.Broker { return n.broker }

// Store is the state store. ReplaceState replaces what it holds, never
// the store itself.
func (n *Node) Store() *storage.Store { return n.store }

// Runtime runs the views' dataflows.
func (n *Node) Runtime() *exec.Runtime { return n.rt }

// QueryPool is the memory pool all ad-hoc queries draw on.
func (n *Node) QueryPool() *exec.MemoryPool { return &n.queryPool }

// Coordinator takes checkpoints and savepoints.
func (n *Node) Coordinator() *checkpoint.Coordinator { return n.coord }

// Publisher publishes the sinks' outboxes (set by Start).
func (n *Node) Publisher() *sink.Publisher { return n.publisher }

// DataDir is the data directory (a setting no client changes).
func (n *Node) DataDir() string { return n.cfg.DataDir }

// SecretKeyPath is the key file of CREATE SECRET values, and whether
// --secret-key-file named it (config.Config.SecretKeyPath).
func (n *Node) SecretKeyPath() (string, bool) { return n.cfg.SecretKeyPath() }

// SchemaDir is the directory stream schema files are read from
// (format.schema-dir, a setting no client changes).
func (n *Node) SchemaDir() string {
	n.cfgMu.RLock()
	defer n.cfgMu.RUnlock()
	return n.cfg.SchemaDir()
}
