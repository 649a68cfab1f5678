package exec

import (
	"fmt"
	"testing"

	"github.com/cockroachdb/pebble/v2"

	"streamdb/storage"
)

// testViewID is the view whose table and state the materialize tests
// write; each side of a test has a store of its own.
const testViewID = 9

// viewSide is one materialized view under test: its operator over a store
// of its own in memory, fed epoch by epoch. A counted operator may evict
// from memory only counts that committed covers, as in the server.
type viewSide struct {
	store     *storage.Store
	op        *materializeOp
	committed uint64        // the newest epoch whose batch is committed
	pending   *pebble.Batch // the newest epoch's batch, when commits lag one epoch
}

// newViewSide makes a view side in mode keeping at most limit counts in
// memory (0: all of them).
func newViewSide(t *testing.T, mode MaterializeMode, limit int64) *viewSide {
	t.Helper()
	s := &viewSide{store: memoryStore(t)}
	var err error
	s.op, err = newMaterializeOp(mode, nil, ViewTablePrefix(testViewID), storage.StatePrefix(testViewID, viewMetaIndex), s.store,
		groupLimit{max: func() int64 { return limit }, committed: func() uint64 { return s.committed }})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// epoch pushes c and then makes the barrier of epoch. Its batch is
// committed at once, or, with lag, only at the next epoch (before that
// epoch's barrier), so that the operator works while its newest epoch is
// not yet durable.
func (s *viewSide) epoch(t *testing.T, c *Chunk, epoch uint64, lag bool) {
	t.Helper()
	if err := s.op.Push(c); err != nil {
		t.Fatal(err)
	}
	if s.pending != nil {
		s.commit(t, epoch-1)
	}
	s.pending = s.store.NewBatch()
	if err := s.op.Barrier(Epoch{ID: epoch, Batch: s.pending}); err != nil {
		t.Fatal(err)
	}
	if !lag {
		s.commit(t, epoch)
	}
}

// commit commits the pending batch, that of epoch.
func (s *viewSide) commit(t *testing.T, epoch uint64) {
	t.Helper()
	if err := s.store.Commit(s.pending, false); err != nil {
		t.Fatal(err)
	}
	s.pending.Close()
	s.pending = nil
	s.committed = epoch
}

// table renders the view's table, rows of ncols columns (viewTable).
func (s *viewSide) table(t *testing.T, ncols int) string {
	t.Helper()
	return viewTable(t, s.store, ViewTablePrefix(testViewID), ncols)
}

// viewTable renders a view's table under prefix: each row of ncols
// columns with its multiplicity, in key order.
func viewTable(t *testing.T, st *storage.Store, prefix []byte, ncols int) string {
	t.Helper()
	var out []string
	err := storage.ScanPrefix(st.DB(), prefix, func(_, v []byte) error {
		row, n, err := DecodeViewValue(v, ncols)
		out = append(out, fmt.Sprint(row, n))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprint(out)
}
