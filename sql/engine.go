// Package sql is streamdb's SQL layer: it parses statements (through the
// front layer and the TiDB parser), binds them against the catalog into
// plans, and executes them: DDL against the catalog and runtime, INSERT by
// publishing to JetStream, SELECT as batch queries over committed state.
package sql

import (
	"context"
	"log/slog"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"streamdb/catalog"
	"streamdb/exec"
	"streamdb/meta"
	"streamdb/pgwire"
)

// Engine is one server's SQL engine; it implements pgwire.Engine.
//
// Lock order: meta/locks.go lists the engine's locks (ddlMu, stateMu, the
// tables' changelog locks, catMu, the leaves) with meta's and the node's,
// in the order they are taken, and says which code holds each.
type Engine struct {
	// cluster is what streamdb_nodes and SHOW MATERIALIZED VIEWS say of
	// the servers (cluster_nodes.go); nil until SetCluster: a server alone.
	cluster atomic.Pointer[clusterMembers]
	// node owns the components below (their opening, settings, state
	// swap and shutdown); the engine keeps them at hand.
	node engineNode
	// host and link are what reads and writes need of the node and of
	// its NATS connection (engine_host.go): the node and the broker, or
	// a unit test's fakes.
	host engineHost
	link natsLink
	log  *slog.Logger
	// writePath holds the state store and the broker that meta's table
	// changelog writer is made over (write_path.go); sql itself reaches
	// them only through meta.
	writePath
	// streams reads the JetStream streams behind streams and tables and
	// binds new ones (meta.Streams).
	streams *meta.Streams
	// state reads snapshots, sizes and source positions of the state
	// store (meta.State).
	state *meta.State
	rt    *exec.Runtime
	coord meta.Coordinator

	// stateMu is held shared by queries while they read state and
	// exclusively by a rollback while it replaces all state.
	stateMu sync.RWMutex

	// points are the checkpoints and savepoints that SAVEPOINT, ROLLBACK
	// TO and AS OF name, and those opened for them.
	points *meta.Points

	// viewKeys caches the columns a view's rows are stored by, keyed by
	// its descriptor (not its id: ROLLBACK TO SAVEPOINT can hand an id out
	// again, and the catalog it restores has new descriptors).
	viewKeys sync.Map
	// ddlMu serialises catalog changes.
	ddlMu sync.Mutex
	// cat stores the catalog's descriptors; objs is the live catalog,
	// which every write to cat is followed by (under catMu).
	cat   *meta.Catalog
	catMu sync.RWMutex
	objs  map[string]*catalog.Descriptor

	// tables is the table changelog writer: the tables' logs and the
	// transactions that publish commits (meta.Tables, write_path.go).
	tables *meta.Tables
	// purge purges changelogs after checkpoints (startPurging).
	purge *meta.Purger
	// dropped collects the JetStream streams of dropped tables.
	dropped *meta.DroppedStreams

	// jobs are the long waits whose progress is reported (progress.go).
	jobs *meta.Jobs
	// backends are the client sessions, for pg_stat_activity
	// (pgcatalog_activity.go).
	backends backendRegistry

	// roles are the users, owners and grants (roles.go), kept outside
	// the Pebble state so that ROLLBACK TO leaves them alone.
	roles *meta.Roles
	// advisory holds pg_advisory_xact_lock's locks.
	advisory advisoryLocks

	// seqs are the sequences' values, kept outside the Pebble state so
	// that ROLLBACK TO leaves them alone.
	seqs *meta.Sequences
	// sinkStore stores, lists and deletes the sinks (sinks.go).
	sinkStore *meta.Sinks
	// ddl applies DDL to the plans sessions bind: it writes the catalog,
	// starts and stops dataflows and runs their backfills (meta.DDL).
	ddl *meta.DDL

	// ackMu guards acked and replay, the positions reads wait for
	// (waitAcknowledged). acked holds, per subject, the sequence of the
	// newest message this server published and acknowledged to a client.
	// replay holds, after a rollback, the end of each table's changelog,
	// which the restored state replays up to, so that reads do not show
	// rows the replay will bring back.
	ackMu  sync.Mutex
	acked  map[string]uint64
	replay map[string]uint64
	// pgSources are the PostgreSQL sources and their appliers
	// (meta.PGSources; sql is their host, pg_source_host.go).
	pgSources *meta.PGSources
	// secrets encrypts CREATE SECRET values (secret_key.go).
	secrets *secretBox
	// groups restores view-groups from checkpoints (restore_group.go).
	groups groupRestorer
}

// Open starts the engine over n (meta.NewNode of a node.Open): it loads
// the catalog and starts every view, then the node's runtime, checkpoints
// and sink publisher. roles, when not nil, keeps the users, owners and grants
// where the server of an --ha-group that takes over reads them. When Open
// fails, it closes what node.Open opened.
func Open(n *meta.Node, log *slog.Logger, roles meta.RoleReplica) (*Engine, error) {
	e := &Engine{node: n, host: n, link: n.Broker(), log: log, writePath: writePath{store: n.Store(), broker: n.Broker()}, streams: meta.NewStreams(n.Broker()), state: meta.NewState(n.Store()), rt: n.Runtime(), coord: n.Coordinator(),
		objs: map[string]*catalog.Descriptor{}, seqs: meta.NewSequences(n.Broker(), log)}
	e.cat = meta.NewCatalog(meta.CatalogConfig{Store: n.Store(), Broker: n.Broker(), Log: log})
	e.points = meta.NewPoints(meta.PointsConfig{Coord: e.coord, Settings: n.CheckpointSettings, Broker: n.Broker(), Log: log})
	e.dropped = e.newDroppedStreams()
	e.tables = e.newTables()
	e.jobs = meta.NewJobs(e.rt.Positions)
	e.sinkStore = meta.NewSinks(meta.SinksConfig{Store: n.Store(), Broker: n.Broker(), Runtime: e.rt, Log: log})
	e.ddl = e.newDDL(n)
	e.groups = n
	n.ExportGroups(e.catalogObjects)
	e.pgSources = meta.NewPGSources(meta.PGSourcesConfig{Host: pgSourceHost{e}, DDL: e.ddl, Log: log})
	var err error
	if e.roles, err = meta.OpenRoles(n.DataDir(), roles, n.CheckFence); err != nil {
		n.Abandon()
		return nil, err
	}
	// On a NATS cluster a leader may still be taking over (a takeover
	// after a node went away): requests that find no one are sent again.
	rctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	err = meta.RetryRequest(rctx, e.tables.ResolveTxns)
	cancel()
	if err != nil {
		n.Abandon()
		return nil, err
	}
	if err := e.loadCatalog(); err != nil {
		n.Abandon()
		return nil, err
	}
	if err := e.openSecrets(); err != nil {
		n.Abandon()
		return nil, err
	}
	if err := n.MarkRunning(); err != nil {
		n.Abandon()
		return nil, err
	}
	// Tables replay their changelogs from the restored positions; reads
	// wait for that replay, as after a rollback.
	e.noteReplay(context.Background())
	e.startPurging()
	n.Start()
	e.pgSources.DropUnfinished(context.Background())
	e.pgSources.StartAll()
	return e, nil
}

// setting reads one setting.
func (e *Engine) setting(key string) string { return e.host.Setting(key) }

// NATSURL is the URL producers can publish to.
func (e *Engine) NATSURL() string { return e.streams.URL() }

// Close shuts down cleanly: changelog purges stop, sequences record
// where they are (so a restart leaves no gap), open checkpoints of AS OF
// close once unused, then the node shuts down (meta.Node.Close).
func (e *Engine) Close() error {
	e.pgSources.StopAll()
	e.stopPurging()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	e.seqs.Flush(ctx)
	cancel()
	e.points.CloseAll()
	return e.node.Close()
}

// loadCatalog reads every object into the live catalog and restarts the
// tables and views, in creation order so that a view starts after what it
// reads (meta.Catalog.Load says what is done in which order, and under
// which locks it is called).
func (e *Engine) loadCatalog() error {
	return e.cat.Load(meta.CatalogLoad{
		Install:    liveCatalog{e}.install,
		Update:     liveCatalog{e}.Set,
		Lookup:     e.lookup,
		Bind:       e.planView,
		StartTable: e.startTable,
		StartView:  e.startView,
	})
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

// newDDL gives the engine's DDL applier over node, from the parts Open
// (or a test's fake node) has already set.
func (e *Engine) newDDL(node meta.DDLNode) *meta.DDL {
	return meta.NewDDL(meta.DDLConfig{Catalog: e.cat, Live: liveCatalog{e}, Runtime: e.rt, Streams: e.streams, Binder: e.streams, Sequences: e.seqs, State: e.state,
		Node: node, Sinks: e.sinkStore, Dropped: e.dropped, Log: e.log, DDLMu: &e.ddlMu, StateMu: &e.stateMu, Bind: e.planView, Wait: e.waitLogged,
		Coord: e.coord, Reload: e.loadCatalog, ResetTables: func() { e.tables.Reset() }, StreamMadeAnew: e.forgetAcked})
}
