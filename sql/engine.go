// Package sql is streamdb's SQL layer: it parses statements (through the
// front layer and the TiDB parser), binds them against the catalog into
// plans, and executes them: DDL against the catalog and runtime, INSERT by
// publishing to JetStream, SELECT as batch queries over committed state.
package sql

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"streamdb/broker"
	"streamdb/catalog"
	"streamdb/checkpoint"
	"streamdb/config"
	"streamdb/exec"
	"streamdb/pgwire"
	"streamdb/sink"
	"streamdb/storage"
)

// Engine is one server's SQL engine; it implements pgwire.Engine.
//
// Lock order: a goroutine holding one of the engine's locks takes only
// locks further down this list.
//
//  1. ddlMu, held for a whole catalog change: DDL, ROLLBACK TO, ALTER
//     STREAM ... POSITION, a purge of changelogs, the collection of
//     dropped streams. Code that may run under stateMu only TryLocks it
//     (finishing a view's populating flag on a read).
//  2. stateMu, exclusive while ROLLBACK TO or ALTER MATERIALIZED VIEW
//     replaces state (always under ddlMu); shared by reads and by table
//     commits.
//  3. The checkpoint coordinator's Exclusive, taken under stateMu.
//  4. The tables' changelog locks: tableLog.mu of several tables in table
//     id order, then tableLog.imu.
//  5. catMu, the live catalog (objs).
//  6. Leaves, held without taking any lock above: asOfMu, ackMu, cfgMu,
//     and the registries' own mutexes (dropped streams, roles, progress
//     jobs, backends, purge). cfgMu is held while a setting is applied to
//     the runtime and the broker (their internal locks come after it),
//     and the coordinator takes it through checkpointSettings.
type Engine struct {
	cfg    *config.Config
	log    *slog.Logger
	store  *storage.Store
	broker *broker.Broker
	rt     *exec.Runtime
	coord  *checkpoint.Coordinator
	// publisher publishes the sinks' outboxes (package sink).
	publisher *sink.Publisher
	// fence, when not nil, says whether this server may still commit
	// (sql/fence.go).
	fence Fence

	// cfgMu guards cfg.Values, which SET and ALTER SYSTEM SET change.
	cfgMu sync.RWMutex

	// stateMu is held shared by queries while they read state and
	// exclusively by a rollback while it replaces all state.
	stateMu sync.RWMutex

	asOfMu sync.Mutex
	asOf   map[string]*asOfState // open checkpoints for AS OF, by directory

	// viewKeys caches the columns a view's rows are stored by, keyed by
	// its descriptor (not its id: ROLLBACK TO SAVEPOINT can hand an id out
	// again, and the catalog it restores has new descriptors).
	viewKeys sync.Map
	// ddlMu serialises catalog changes.
	ddlMu sync.Mutex
	catMu sync.RWMutex
	objs  map[string]*catalog.Descriptor

	tables tableLogs
	// purge purges changelogs after checkpoints (truncate.go).
	purge purger

	// jobs are the long waits whose progress is reported (progress.go).
	jobs progressJobs
	// backends are the client sessions, for pg_stat_activity
	// (pgcatalog_activity.go).
	backends backendRegistry

	// roles are the users, owners and grants (roles.go), kept outside
	// the Pebble state so that ROLLBACK TO leaves them alone.
	roles *roleStore

	// ackMu guards acked and replay, the positions reads wait for
	// (waitAcknowledged). acked holds, per subject, the sequence of the
	// newest message this server published and acknowledged to a client.
	// replay holds, after a rollback, the end of each table's changelog,
	// which the restored state replays up to, so that reads do not show
	// rows the replay will bring back.
	ackMu  sync.Mutex
	acked  map[string]uint64
	replay map[string]uint64
}

// runningMarker exists in the data directory while a server runs; finding
// it at start means the last run did not shut down cleanly.
const runningMarker = "RUNNING"

// Open starts the engine: the broker (embedded NATS unless cfg.NATSURL is
// set), the state store (recovered from a checkpoint when asked to or after
// an unclean shutdown), the runtime, every view in the catalog, and
// periodic checkpoints.
func Open(cfg *config.Config, log *slog.Logger) (*Engine, error) {
	return OpenMember(cfg, log, nil)
}

// Member is what a server of an --ha-group shares with its group.
type Member struct {
	// Fence says whether this server may still commit.
	Fence Fence
	// Roles keeps the users, owners and grants where the server that
	// takes over reads them.
	Roles RoleReplica
	// Ctx, when cancelled (a signal while the server takes over), stops
	// the download of the checkpoint to restore; Open then fails.
	Ctx context.Context
}

// OpenMember opens the engine of a member of an --ha-group: it commits
// only while m.Fence allows it, and keeps its roles in m.Roles. A nil m
// is a server of no group (Open).
func OpenMember(cfg *config.Config, log *slog.Logger, m *Member) (*Engine, error) {
	var fence Fence
	var roles RoleReplica
	ctx := context.Background()
	if m != nil {
		if m.Ctx != nil {
			ctx = m.Ctx
		}
		fence = m.Fence
		if m.Roles != nil {
			roles = fencedRoles{fence: fence, r: m.Roles}
		}
	}
	if err := os.MkdirAll(cfg.DataDir, 0o755); err != nil {
		return nil, fmt.Errorf("create data directory: %w", err)
	}
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
	store, err := openState(ctx, cfg, b, log)
	if err != nil {
		b.Close()
		return nil, err
	}
	e := &Engine{cfg: cfg, log: log, store: store, broker: b, fence: fence, objs: map[string]*catalog.Descriptor{}, asOf: map[string]*asOfState{}}
	if e.roles, err = openRoles(cfg.DataDir, roles); err != nil {
		store.Close()
		b.Close()
		return nil, err
	}
	e.rt = exec.NewRuntime(store, b, log, cfg.Duration(config.ExecutionBarrierInterval))
	e.rt.SetAligned(cfg.Values[config.ExecutionCheckpointingMode] != "at_least_once")
	e.rt.SetGroupCache(cfg.Int(config.StateCacheGroupsPerOperator))
	e.rt.SetJoinCache(cfg.Int(config.StateCacheJoinKeysPerSide))
	e.rt.SetTopNCache(cfg.Int(config.StateCacheTopNRowsPerOperator))
	e.rt.SetMemoryBudget(cfg.Int(config.StateMemoryBudget))
	if e.coord, err = checkpoint.NewCoordinator(e.checkpointSettings, store, e.rt, log); err != nil {
		store.Close()
		b.Close()
		return nil, err
	}
	if err := e.openRemotes(); err != nil {
		store.Close()
		b.Close()
		return nil, err
	}
	if fence != nil {
		e.coord.SetUploadFence(e.confirmFence)
	}
	if err := e.loadCatalog(); err != nil {
		e.rt.Close()
		store.Close()
		b.Close()
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(cfg.DataDir, runningMarker), []byte(fmt.Sprint(os.Getpid())), 0o644); err != nil {
		e.rt.Close()
		store.Close()
		b.Close()
		return nil, err
	}
	// Tables replay their changelogs from the restored positions; reads
	// wait for that replay, as after a rollback.
	e.noteReplay(context.Background())
	e.rt.Start()
	e.startPurging()
	e.coord.Start()
	e.publisher = sink.NewPublisher(store, b.JS, e.sinkGate, log)
	e.publisher.Start()
	return e, nil
}

// openState opens the state store, first restoring a checkpoint into it
// when --restore-from names one, or after an unclean shutdown (the newest
// usable checkpoint; damaged or half-written ones are skipped). The memory
// backend starts from the newest checkpoint every time.
func openState(ctx context.Context, cfg *config.Config, b *broker.Broker, log *slog.Logger) (*storage.Store, error) {
	memory := cfg.Values[config.StateBackend] == "memory"
	_, markerErr := os.Stat(filepath.Join(cfg.DataDir, runningMarker))
	unclean := markerErr == nil
	var from *checkpoint.Meta
	// Points downloaded from a bucket go to a scratch directory, removed
	// once the state is restored (RestoreState hard-links what it keeps).
	scratch := filepath.Join(cfg.DataDir, remoteScratch)
	os.RemoveAll(scratch)
	defer os.RemoveAll(scratch)
	switch {
	case checkpoint.IsRemote(cfg.RestoreFrom):
		m, err := fetchRemotePoint(ctx, cfg.RestoreFrom, b, scratch)
		if err == nil && m == nil {
			err = fmt.Errorf("%s holds no whole checkpoint", cfg.RestoreFrom)
		}
		if err != nil {
			return nil, fmt.Errorf("--restore-from: %w", err)
		}
		from = m
	case cfg.RemoteCheckpoints() != "" && freshDataDir(cfg, memory):
		// A new machine (or a lost data directory): start from the
		// newest whole checkpoint in the bucket, if it holds one.
		m, err := fetchRemotePoint(ctx, cfg.RemoteCheckpoints(), b, scratch)
		if err != nil {
			return nil, fmt.Errorf("state.checkpoints.dir: %w", err)
		}
		if m == nil {
			log.Info("checkpoint bucket holds no checkpoint: starting empty", "bucket", cfg.RemoteCheckpoints())
		}
		from = m
	case cfg.RestoreFrom != "":
		m, err := checkpoint.Verify(cfg.RestoreFrom)
		if err != nil {
			return nil, fmt.Errorf("--restore-from: %w", err)
		}
		from = m
	case unclean || memory:
		// The newest usable checkpoint in any directory the server has
		// used (or a newer savepoint), never older than the last DDL.
		m, err := checkpoint.ChooseRecovery(checkpoint.RecoveryOptions{
			DataDir: cfg.DataDir, CheckpointsDir: cfg.CheckpointsDir(), SavepointsDir: cfg.SavepointsDir(),
			PreferCheckpoint: cfg.Bool(config.ExecutionCheckpointingPreferCheckpointForRecovery),
		}, log)
		if err != nil {
			return nil, err
		}
		from = m
		if unclean && m == nil && !memory {
			log.Warn("unclean shutdown and no usable checkpoint: recovering from the live state directory")
		}
	}
	if from != nil {
		log.Info("recovering from checkpoint", "dir", from.Dir, "id", from.ID, "epoch", from.Epoch, "taken", from.CompletedAt)
	}
	if memory {
		store, err := storage.OpenMemory()
		if err != nil || from == nil {
			return store, err
		}
		start := time.Now()
		if err := store.ImportSnapshot(filepath.Join(from.Dir, checkpoint.StateDir)); err != nil {
			store.Close()
			return nil, fmt.Errorf("restore %s: %w", from.Dir, err)
		}
		log.Info("restored state", "took", time.Since(start))
		return store, nil
	}
	if from != nil {
		start := time.Now()
		if from.Backend == "memory" {
			return nil, fmt.Errorf("%s is a memory-backend snapshot; start with state.backend = memory to restore it", from.Dir)
		}
		if err := checkpoint.RestoreState(from, cfg.StateDir()); err != nil {
			return nil, fmt.Errorf("restore %s: %w", from.Dir, err)
		}
		log.Info("restored state", "took", time.Since(start))
	}
	return storage.Open(cfg.StateDir())
}

// checkpointSettings reads the current checkpoint settings.
func (e *Engine) checkpointSettings() checkpoint.Settings {
	e.cfgMu.RLock()
	defer e.cfgMu.RUnlock()
	c := e.cfg
	s := checkpoint.Settings{
		Interval:             c.Duration(config.ExecutionCheckpointingInterval),
		MinPause:             c.Duration(config.ExecutionCheckpointingMinPause),
		Timeout:              c.Duration(config.ExecutionCheckpointingTimeout),
		MaxConcurrent:        int(c.Int(config.ExecutionCheckpointingMaxConcurrentCheckpoints)),
		TolerableFailures:    int(c.Int(config.ExecutionCheckpointingTolerableFailedCheckpoints)),
		NumRetained:          int(c.Int(config.StateCheckpointsNumRetained)),
		RetainOnCancellation: c.Values[config.ExecutionCheckpointingExternalizedCheckpointRetention] != "delete_on_cancellation",
		Async:                c.Bool(config.StateBackendAsync),
		Incremental:          c.Bool(config.StateBackendIncremental),
		Backend:              c.Values[config.StateBackend],
		MemoryLimit:          c.Int(config.StateBackendMemoryMaxSize),
		Dir:                  c.CheckpointsDir(),
		SavepointsDir:        c.SavepointsDir(),
		DataDir:              c.DataDir,
	}
	if e.fence != nil {
		s.Fence = e.confirmFence
	}
	return s
}

// setting reads one setting.
func (e *Engine) setting(key string) string {
	e.cfgMu.RLock()
	defer e.cfgMu.RUnlock()
	return e.cfg.Values[key]
}

// NATSURL is the URL producers can publish to.
func (e *Engine) NATSURL() string { return e.broker.URL }

// Close shuts down cleanly: periodic checkpoints stop, views stop, the
// memory backend writes a final snapshot, and checkpoints are kept or
// deleted as externalized-checkpoint-retention says.
func (e *Engine) Close() error {
	e.publisher.Stop()
	e.coord.StopPeriodic()
	e.stopPurging()
	e.rt.Close()
	e.asOfMu.Lock()
	for dir, st := range e.asOf {
		e.retireLocked(dir, st)
	}
	e.asOfMu.Unlock()
	s := e.checkpointSettings()
	if s.Backend == "memory" {
		if _, err := e.coord.Take(context.Background(), checkpoint.TriggerShutdown); err != nil {
			e.log.Error("final snapshot of the memory backend failed", "err", err)
		}
	}
	e.coord.Stop() // waits for checkpoints that sessions started
	if s.Backend != "memory" && !s.RetainOnCancellation {
		e.coord.DeleteAll()
	}
	err := e.store.Close()
	e.broker.Close()
	if err == nil {
		os.Remove(filepath.Join(e.cfg.DataDir, runningMarker))
	}
	return err
}

// loadCatalog reads every object and restarts the views, in creation order
// so that a view starts after what it reads.
func (e *Engine) loadCatalog() error {
	if err := e.store.CheckDirFormat(); err != nil {
		return err
	}
	descs, err := storage.Descriptors(e.store.DB())
	if err != nil {
		return err
	}
	if err := checkViewFormats(descs); err != nil {
		return err
	}
	sort.Slice(descs, func(i, j int) bool { return descs[i].ID < descs[j].ID })
	e.catMu.Lock()
	e.objs = map[string]*catalog.Descriptor{}
	for _, d := range descs {
		e.objs[d.Name] = d
	}
	e.catMu.Unlock()
	for _, d := range descs {
		if d.Kind != catalog.KindStream && d.Kind != catalog.KindTable {
			continue
		}
		// A restored savepoint may come from another machine: bind (or
		// create) the JetStream stream of every stream it declares.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		js, err := e.broker.EnsureStream(ctx, d.Name, d.Subject)
		cancel()
		if err != nil {
			return fmt.Errorf("stream %s: %w", d.Name, err)
		}
		if js != d.JSStream {
			e.log.Warn("stream's subject is now held by another JetStream stream", "stream", d.Name, "subject", d.Subject, "was", d.JSStream, "now", js)
			d.JSStream = js
		}
	}
	for _, d := range descs {
		if d.Kind == catalog.KindTable {
			if err := e.startTable(d); err != nil {
				return fmt.Errorf("restore table %s: %w", d.Name, err)
			}
			continue
		}
		if d.Kind != catalog.KindView {
			continue
		}
		start := time.Now()
		root, err := e.viewPlan(d)
		if err != nil {
			return fmt.Errorf("restore materialized view %s: %w", d.Name, err)
		}
		if err := e.startView(d, root); err != nil {
			return fmt.Errorf("restore materialized view %s: %w", d.Name, err)
		}
		e.log.Info("restored materialized view", "view", d.Name, "took", time.Since(start))
	}
	return nil
}

func (e *Engine) lookup(name string) (*catalog.Descriptor, bool) {
	e.catMu.RLock()
	defer e.catMu.RUnlock()
	d, ok := e.objs[name]
	return d, ok
}

// objects returns catalog objects of one kind, by name.
func (e *Engine) objects(kind catalog.ObjectKind) []*catalog.Descriptor {
	e.catMu.RLock()
	defer e.catMu.RUnlock()
	var out []*catalog.Descriptor
	for _, d := range e.objs {
		if d.Kind == kind {
			out = append(out, d)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// NewSession implements pgwire.Engine.
func (e *Engine) NewSession(ctx context.Context, params map[string]string) (pgwire.Session, error) {
	if err := e.checkLogin(params["user"]); err != nil {
		return nil, err
	}
	return newSession(e, params), nil
}
