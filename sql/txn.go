package sql

import (
	"context"
	"maps"

	"streamdb/catalog"
	"streamdb/exec"
	"streamdb/front"
	"streamdb/meta"
	"streamdb/sqlerr"
)

// A transaction block (BEGIN ... COMMIT) keeps its writes in the session
// and publishes them at COMMIT (commitWrites), so ROLLBACK discards them
// and no other session or view sees part of a transaction. Statements
// inside it read tables as they are plus the transaction's own changes.
// After an error the block is aborted: every statement but ROLLBACK (or
// ROLLBACK TO a savepoint taken before the error) fails with 25P02, and
// COMMIT rolls back. SAVEPOINT, RELEASE and ROLLBACK TO SAVEPOINT inside
// the block mark and undo the transaction's writes, as in PostgreSQL;
// outside a block they are streamdb's durable, whole-system savepoints.
//
// DDL, CHECKPOINT and other server commands inside a block take effect at
// once, as they do outside one.

// Tables are read with snapshot isolation (PostgreSQL's REPEATABLE READ,
// with first-committer-wins): the block reads them in one snapshot, taken
// at its first statement that reads or writes, plus its own changes;
// COMMIT replays its changes against the tables as they are then, and
// fails with 40001 if a row it changes was changed by a commit after its
// snapshot. So a read-modify-write never loses a concurrent update.
// Views are computed from committed input: a read of a view inside a
// block sees the newest committed epoch (as READ COMMITTED would), not
// the block's own uncommitted writes.

// txn is an open transaction block.
type txn struct {
	// failed: an error aborted the block (PostgreSQL's 'E' state).
	failed bool
	// committed: COMMIT published the block's writes (its WITH HOLD
	// cursors then outlive it).
	committed bool
	// snap is the block's snapshot, nil until its first read or write.
	snap   *meta.TxSnapshot
	tables []*tableWrite
	// streams holds the rows inserted into streams, by stream.
	streams    []*streamWrite
	savepoints []txSavepoint
	// spSeq numbers the block's savepoints (txSavepoint.seq).
	spSeq int
	// settings undoes the block's SET and SET LOCAL at its end
	// (session_settings.go).
	settings map[string]*settingUndo
	// constraintModes and allConstraints are SET CONSTRAINTS' choices
	// (true: IMMEDIATE) by constraint name and for ALL
	// (set_constraints.go).
	constraintModes map[string]bool
	allConstraints  *bool
	// ddl is the catalog-changing statements the block ran, which its
	// ROLLBACK does not undo (txn_ddl.go).
	ddl []blockDDL
	// doNothing holds the statements that inserted with ON CONFLICT DO
	// NOTHING, by their first change in tableWrite.stmts
	// (insert_conflict.go).
	doNothing map[*exec.Change]doNothingStmt
	// spill is the scratch store of the changes the block spilled, nil
	// until it spills (block_spill.go).
	spill *blockSpill
	// streaming is the statement streaming its changes into the block
	// (table_stream_block.go), nil between statements: what the
	// statement's subqueries read of the block leaves its changes out.
	streaming *blockStatement
}

// txSavepoint marks how much a transaction had written when SAVEPOINT
// ran: statement counts per table and row counts per stream, in the
// order of txn.tables and txn.streams (which only grow).
type txSavepoint struct {
	name    string
	seq     int
	tables  []int
	streams []int
	// constraintModes and allConstraints are SET CONSTRAINTS' modes when
	// the savepoint was taken, which ROLLBACK TO restores.
	constraintModes map[string]bool
	allConstraints  *bool
}

// table returns the transaction's writes to table d, adding an empty entry.
func (t *txn) table(d *catalog.Descriptor) *tableWrite {
	for _, w := range t.tables {
		if w.d.ID == d.ID {
			return w
		}
	}
	w := &tableWrite{d: d}
	t.tables = append(t.tables, w)
	return w
}

// stream returns the transaction's rows for stream d, adding an empty entry.
func (t *txn) stream(d *catalog.Descriptor) *streamWrite {
	for _, w := range t.streams {
		if w.d.ID == d.ID {
			return w
		}
	}
	w := &streamWrite{d: d}
	t.streams = append(t.streams, w)
	return w
}

// pendingFor returns the changes the block sees on top of its snapshot in
// table id, in order: inflight commits from before the snapshot, then its
// own. For a table whose changes spilled, those are all in the spill
// (tableState.spill) but the statements since.
func (t *txn) pendingFor(id uint32) []exec.Change {
	var out []exec.Change
	if t.spillOf(id) == nil {
		out = append(out, t.snap.Pending[id]...)
	}
	for _, w := range t.tables {
		if w.d.ID == id {
			out = append(out, exec.ChangelogOrder(w.stmts)...)
		}
	}
	return out
}

// txSnapshot returns the block's snapshot, taking it at the first call.
// It holds every acknowledged commit to a table (in the state or inflight)
// without waiting for an epoch.
func (s *session) txSnapshot() (*meta.TxSnapshot, error) {
	if s.tx.snap == nil {
		snap, err := s.e.tables.SnapshotAll()
		if err != nil {
			return nil, err
		}
		s.tx.snap = snap
	}
	return s.tx.snap, nil
}

// endTx ends the open block, releasing its snapshot.
func (s *session) endTx() {
	if s.tx != nil {
		s.endTxCursors(s.tx, s.tx.committed)
		s.endTxSettings(s.tx, s.tx.committed)
	}
	if s.tx != nil {
		s.tx.closeSpill(s)
	}
	if s.tx != nil && s.tx.snap != nil {
		s.tx.snap.Snap.Close()
	}
	s.tx = nil
	s.e.advisory.releaseAll(s)
}

func (t *txn) mark(name string) {
	t.spSeq++
	sp := txSavepoint{name: name, seq: t.spSeq, tables: make([]int, len(t.tables)), streams: make([]int, len(t.streams))}
	for i, w := range t.tables {
		sp.tables[i] = w.stmtCount()
	}
	for i, w := range t.streams {
		sp.streams[i] = w.rowCount()
	}
	sp.constraintModes, sp.allConstraints = maps.Clone(t.constraintModes), t.allConstraints
	t.savepoints = append(t.savepoints, sp)
}

func (t *txn) find(name string) int {
	for i := len(t.savepoints) - 1; i >= 0; i-- {
		if t.savepoints[i].name == name {
			return i
		}
	}
	return -1
}

// undoTo discards what the transaction wrote after savepoint i, which
// stays (as ROLLBACK TO SAVEPOINT leaves it).
func (t *txn) undoTo(i int) error {
	sp := t.savepoints[i]
	for j, w := range t.tables {
		keep := 0
		if j < len(sp.tables) {
			keep = sp.tables[j]
		}
		if err := w.keepStmts(keep); err != nil {
			return err
		}
	}
	for j, w := range t.streams {
		keep := 0
		if j < len(sp.streams) {
			keep = sp.streams[j]
		}
		if err := w.keepRows(keep); err != nil {
			return err
		}
	}
	t.constraintModes, t.allConstraints = maps.Clone(sp.constraintModes), sp.allConstraints
	t.savepoints = t.savepoints[:i+1]
	t.failed = false
	return nil
}

// errAborted is PostgreSQL's answer to a statement in an aborted block.
func errAborted() error {
	return sqlerr.New(sqlerr.InFailedSQLTransaction, "current transaction is aborted, commands ignored until end of transaction block").
		WithHint("Run ROLLBACK (or ROLLBACK TO SAVEPOINT) to continue.")
}

// begin, commit and rollback run BEGIN, COMMIT/END and ROLLBACK/ABORT.
func (s *session) begin(modes []*front.Set) (string, error) {
	if s.tx == nil {
		s.tx = &txn{}
		s.beginSettings(modes)
	}
	return "BEGIN", nil
}

func (s *session) commit(ctx context.Context) (string, error) {
	tx := s.tx
	defer s.endTx()
	if tx == nil {
		return "COMMIT", nil
	}
	if tx.failed {
		s.warnDDLKept(ctx, "ROLLBACK", 0)
		return "ROLLBACK", nil
	}
	if err := s.commitWrites(ctx, tx.tables, tx.streams); err != nil {
		return "", tx.doNothingConflict(err)
	}
	tx.committed = true
	return "COMMIT", nil
}

func (s *session) rollbackTx(ctx context.Context) (string, error) {
	s.warnDDLKept(ctx, "ROLLBACK", 0)
	s.endTx()
	return "ROLLBACK", nil
}

// Transaction savepoints (inside BEGIN ... COMMIT).

func (s *session) txSavepoint(name string) *prepared {
	return command(func(context.Context) (string, error) {
		s.tx.mark(name)
		return "SAVEPOINT", nil
	})
}

func (s *session) txRelease(name string) *prepared {
	return command(func(context.Context) (string, error) {
		i := s.tx.find(name)
		if i < 0 {
			return "", sqlerr.New(sqlerr.InvalidSavepointSpecification, "savepoint %q does not exist", name)
		}
		s.tx.savepoints = s.tx.savepoints[:i]
		return "RELEASE", nil
	})
}

func (s *session) txRollbackTo(name string) *prepared {
	return command(func(ctx context.Context) (string, error) {
		i := s.tx.find(name)
		if i < 0 {
			return "", sqlerr.New(sqlerr.InvalidSavepointSpecification, "savepoint %q does not exist", name)
		}
		s.warnDDLKept(ctx, "ROLLBACK TO SAVEPOINT", s.tx.savepoints[i].seq)
		s.rollbackToCursors(s.tx, s.tx.savepoints[i].seq)
		if err := s.tx.undoTo(i); err != nil {
			return "", err
		}
		return "ROLLBACK", nil
	})
}
