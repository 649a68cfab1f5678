package meta

import (
	"context"
	"log/slog"
	"sync"

	"streamdb/catalog"
	"streamdb/checkpoint"
	"streamdb/exec"
	"streamdb/plan"
	"streamdb/sqlerr"
)

// DDL applies catalog changes to plans the frontend has already bound:
// sql parses a statement, binds it, checks privileges and the objects it
// names, builds the new descriptor, and asks DDL to make it so. What sql
// asks of it:
//
//   - Create, Put, Replace, Drop: store a descriptor (with a new id, the
//     one it has, or in place of the same object) or delete it with its
//     state, stopping its dataflow, and keep the live catalog in step;
//     Checkpoint: the checkpoint that records the change before the
//     statement returns.
//   - RecordPlan, ViewPlan, StartView, SourceStreams, InitPositions,
//     SourceStarts (dataflow.go): a view's plan record, the plan its
//     dataflow is built from, its start, the streams it reads and the
//     positions it starts them at.
//   - InstallView, Backfill, AbandonView, Unpopulate (view_create.go):
//     CREATE MATERIALIZED VIEW and the REFRESH of a view created WITH NO
//     DATA, from the bound plan to the end of the backfill, and their
//     undoing when the statement fails.
//   - PopulatingProgress, FinishPopulating, CheckPopulated, ViewStatus
//     (populating.go): the flag that keeps other sessions from reading a
//     view before its backfill is done.
//   - PlanAlter, SwapView (view_alter.go): ALTER MATERIALIZED VIEW's
//     mapping of the old plan's operator state onto the new plan's, and
//     the swap of the view's state and descriptor.
//   - CreateSource (source_create.go): CREATE STREAM and CREATE TABLE,
//     from the bound descriptor to the running table, undone on failure.
//   - CreateSequence, AlterSequence (sequence_ddl.go): a sequence's
//     definition stored, its values following it.
//   - SetConstraints (constraints_ddl.go): a table's constraints
//     replaced, as DROP CONSTRAINT and DROP TABLE ... CASCADE drop them.
//   - DropCascade (drop.go): what DROP removes once sql has checked it.
//
// Locks (locks.go): every method says whether the caller holds ddlMu
// (held across binding, so that the catalog a plan was bound against is
// the one it is applied to) or whether it takes it itself; those that
// take it defer the unlock. DDL writes the live catalog through
// LiveCatalog, which takes catMu.
type DDL struct {
	cfg DDLConfig
}

// LiveCatalog is the frontend's live catalog, the descriptors by name
// that statements bind against, as DDL updates it after each write of
// the stored catalog. Its methods take catMu.
type LiveCatalog interface {
	// Lookup returns the descriptor named name.
	Lookup(name string) (*catalog.Descriptor, bool)
	// Set puts d under its name.
	Set(d *catalog.Descriptor)
	// Delete removes name.
	Delete(name string)
	// Swap puts next under cur's name if that name still holds cur, and
	// says whether it did.
	Swap(cur, next *catalog.Descriptor) bool
	// Objects returns every object, in no order.
	Objects() []*catalog.Descriptor
}

// DDLNode is what DDL needs of the node (Node): the checkpoint of a
// catalog change, and the checkpoint settings a DROP reads.
type DDLNode interface {
	CheckpointDDL(ctx context.Context) error
	CheckpointSettings() checkpoint.Settings
}

// Dataflows is what DDL asks of the runtime (*exec.Runtime): starting
// and removing a view's dataflow, its backfill's targets, its status and
// state layout, and the stop and restart around ALTER's swap.
type Dataflows interface {
	StartView(d *catalog.Descriptor, root plan.Node, ups exec.UpstreamPlans) error
	Remove(id uint32)
	Paused() bool
	Targets(ctx context.Context, ids []uint32) (map[string]uint64, error)
	ViewFailure(id uint32) error
	Attaching(id uint32) bool
	ViewStatus(id uint32) string
	Layout(id uint32) (*exec.ViewLayout, bool)
	StopAll()
	StartDeferred()
}

// SourceEnds is what DDL reads of the JetStream streams behind a view's
// sources (Streams): where each starts and where its subject ends.
type SourceEnds interface {
	First(ctx context.Context, d *catalog.Descriptor) (uint64, error)
	LastOnSubject(ctx context.Context, d *catalog.Descriptor) (uint64, error)
}

// StreamCollector is what DDL tells the collector of dropped tables'
// JetStream streams (DroppedStreams) and asks of it: the id that marks
// this server's tables' streams.
type StreamCollector interface {
	Note(jsStream, subject string)
	Forget(jsStream string)
	Owner() (string, error)
	CollectLocked()
	Start()
}

// DDLCoordinator is what DDL asks of the checkpoint coordinator
// (Coordinator): to swap ALTER's state while no checkpoint is taken, and
// to delete the checkpoints a DROP under delete_on_cancellation ends.
type DDLCoordinator interface {
	Exclusive(fn func() error) error
	DeleteAll()
}

// DDLConfig is what DDL works on.
type DDLConfig struct {
	Catalog *Catalog
	Live    LiveCatalog
	Runtime Dataflows
	Streams SourceEnds
	// Binder binds and creates the JetStream streams of new streams and
	// tables (Streams).
	Binder StreamBinder
	// Sequences are the sequences' values (Sequences).
	Sequences SequenceValues
	State     *State
	Node      DDLNode
	Sinks     *Sinks
	Dropped   StreamCollector
	Coord     DDLCoordinator
	Log       *slog.Logger
	// DDLMu and StateMu are sql's ddlMu and stateMu (locks.go).
	DDLMu   *sync.Mutex
	StateMu *sync.RWMutex
	// Bind binds the SQL of a view stored without a plan record.
	Bind func(query string) (plan.Node, error)
	// Wait waits for views ids to reach targets, reporting its progress
	// to the client as what while it takes long.
	Wait func(ctx context.Context, ids []uint32, targets map[string]uint64, what string) error
	// Reload loads the catalog again and restarts every dataflow
	// (Catalog.Load, as sql calls it); ResetTables forgets what the
	// table write path cached of the state. SwapView calls both.
	Reload      func() error
	ResetTables func()
	// StreamMadeAnew tells the frontend that a CREATE made the JetStream
	// stream of subject anew: its sequences start again from 1, so what
	// it remembers of the old stream's (acknowledged writes) is void.
	StreamMadeAnew func(subject string)
}

// NewDDL returns the DDL service over cfg.
func NewDDL(cfg DDLConfig) *DDL { return &DDL{cfg: cfg} }

// Create gives d a new object id, stores it and puts it in the live
// catalog. The caller holds ddlMu.
func (x *DDL) Create(d *catalog.Descriptor) error { return x.store(d, true) }

// Put stores d under the id it has and puts it in the live catalog. The
// caller holds ddlMu.
func (x *DDL) Put(d *catalog.Descriptor) error { return x.store(d, false) }

func (x *DDL) store(d *catalog.Descriptor, newID bool) error {
	store := x.cfg.Catalog.Put
	if newID {
		store = x.cfg.Catalog.Create
	}
	if err := store(d); err != nil {
		return err
	}
	x.cfg.Live.Set(d)
	return nil
}

// Replace stores d in place of old, the same object under the same name,
// and puts it in the live catalog. It suits changes that touch no running
// dataflow (a sequence's options). The caller holds ddlMu.
func (x *DDL) Replace(old, d *catalog.Descriptor) error {
	if old.Name != d.Name || old.ID != d.ID {
		return sqlerr.New(sqlerr.InternalError, "Replace of %s (id %d) by %s (id %d): not the same object and name", old.Name, old.ID, d.Name, d.ID)
	}
	if err := x.cfg.Catalog.Replace(old, d); err != nil {
		return err
	}
	x.cfg.Live.Set(d)
	return nil
}

// Drop stops a view's or table's dataflow and deletes the object and its
// state. The JetStream stream of a dropped stream is left alone: the
// input belongs to its producers. The caller holds ddlMu.
func (x *DDL) Drop(d *catalog.Descriptor) error {
	if d.Kind == catalog.KindView || d.Kind == catalog.KindTable {
		x.cfg.Runtime.Remove(d.ID)
	}
	if err := x.cfg.Catalog.Drop(d); err != nil {
		return err
	}
	x.cfg.Live.Delete(d.Name)
	x.cfg.Log.Info("dropped", "kind", d.Kind, "name", d.Name)
	return nil
}

// Checkpoint captures a catalog change in a checkpoint before the DDL
// statement returns, so that recovery from the newest checkpoint never
// loses an acknowledged CREATE or DROP. It runs even when ctx is
// canceled: the change is made.
func (x *DDL) Checkpoint(ctx context.Context) error {
	if err := x.cfg.Node.CheckpointDDL(context.WithoutCancel(ctx)); err != nil {
		return sqlerr.New(sqlerr.InternalError, "the change is done, but the checkpoint that records it failed: %v", err).
			WithHint("Run CHECKPOINT to retry; until one succeeds, a crash would recover without this change.")
	}
	return nil
}

// CreateLocked takes ddlMu, runs check (which refuses a name taken
// meanwhile, say), creates d and checkpoints the change; created says
// whether d was stored (the checkpoint may fail after it was). It is the
// last step of a CREATE whose slow part (a copy of a PostgreSQL source's
// tables) runs without the lock.
func (x *DDL) CreateLocked(ctx context.Context, d *catalog.Descriptor, check func() error) (created bool, err error) {
	x.cfg.DDLMu.Lock()
	defer x.cfg.DDLMu.Unlock()
	if err := check(); err != nil {
		return false, err
	}
	if err := x.Create(d); err != nil {
		return false, err
	}
	return true, x.Checkpoint(ctx)
}

// DropLocked takes ddlMu and drops d (Drop).
func (x *DDL) DropLocked(d *catalog.Descriptor) error {
	x.cfg.DDLMu.Lock()
	defer x.cfg.DDLMu.Unlock()
	return x.Drop(d)
}
