package meta

import (
	"github.com/cockroachdb/pebble/v2"

	"streamdb/storage"
)

// State is what the frontend reads and sets of the committed state
// outside the table write path: snapshots for reads, the source
// positions of views, and the sizes of state tables. It takes no lock;
// its callers hold sql's stateMu (shared for reads) or ddlMu (for the
// position changes of ALTER STREAM ... POSITION and CREATE).
type State struct {
	store *storage.Store
}

// NewState returns the state of store. A rollback replaces what store
// holds, never the store, so a State lives as long as the server.
func NewState(store *storage.Store) *State { return &State{store: store} }

// Snapshot is a consistent view of the state as of a committed epoch.
type Snapshot = pebble.Snapshot

// StateReader is the state a batch query reads: a Snapshot, or a
// transaction block's view of one (exec.RunBatch).
type StateReader = storage.Reader

// SourcePosition is where a view reads one of its sources: the sequence
// of the last message it consumed (Seq) and how many it skipped.
type SourcePosition = storage.SourcePosition

// Snapshot returns a view of the newest committed epoch; Close it when
// done.
func (s *State) Snapshot() *Snapshot { return s.store.Snapshot() }

// PositionAt is the position of source i of object obj in snap (the
// zero position when none is stored).
func PositionAt(snap *Snapshot, obj uint32, i uint16) (SourcePosition, error) {
	return storage.PositionAt(snap, obj, i)
}

// StartPositions stores, in one synced batch, where view starts reading
// each source listed in before: the sequence before its first message.
// Sources with 0 keep no position (they start at the beginning).
func (s *State) StartPositions(view uint32, before map[uint16]uint64) error {
	b := s.store.NewBatch()
	defer b.Close()
	for i, seq := range before {
		if seq == 0 {
			continue
		}
		if err := storage.PutPosition(b, view, i, storage.SourcePosition{Seq: seq}); err != nil {
			return err
		}
	}
	return s.store.Commit(b, true)
}

// MovePositions sets, in one synced batch, the sequence last consumed of
// view's sources listed in sources to last (ALTER STREAM ... POSITION);
// the view must be stopped.
func (s *State) MovePositions(view uint32, sources []uint16, last uint64) error {
	b := s.store.NewBatch()
	defer b.Close()
	for _, i := range sources {
		pos, err := s.store.Position(view, i)
		if err != nil {
			return err
		}
		pos.Seq = last
		if err := storage.PutPosition(b, view, i, pos); err != nil {
			return err
		}
	}
	return s.store.Commit(b, true)
}

// Position is the committed position of source i of object obj.
func (s *State) Position(obj uint32, i uint16) (SourcePosition, error) {
	return s.store.Position(obj, i)
}
