package sql

import (
	"streamdb/catalog"
	"streamdb/exec"
)

// defaultTransactionSpillMemory is transaction_spill_memory's default.
const defaultTransactionSpillMemory = "64MB"

// A block spills the changes of the tables that take streaming commits
// (bulkTableOK: no UNIQUE constraint or unique index, no foreign key at
// either end, not a mirror or an envelope table), and only while none of
// its statements inserted with ON CONFLICT DO NOTHING (whose COMMIT
// answers by statement, txn.doNothing). Other tables' changes, and rows
// for streams, stay in memory.

// spillLimit is the session's transaction_spill_memory in bytes; 0 keeps
// every change in memory.
func (s *session) spillLimit() int64 {
	v, ok := s.settings["transaction_spill_memory"]
	if !ok {
		v = defaultTransactionSpillMemory
	}
	n, err := parseMemory(v)
	if err != nil {
		return 0
	}
	return n
}

// noteTxWrite accounts for a statement's changes to w, just kept, and
// spills the block's changes once they pass the session's budget.
func (s *session) noteTxWrite(w *tableWrite, changes []exec.Change) error {
	for _, ch := range changes {
		w.memBytes += changeBytes(ch.Row)
	}
	limit := s.spillLimit()
	if limit <= 0 || len(s.tx.doNothing) > 0 {
		return nil
	}
	var held int64
	for _, t := range s.tx.tables {
		held += t.memBytes
	}
	if held <= limit {
		return nil
	}
	for _, t := range s.tx.tables {
		if len(t.stmts) == 0 || !s.spillable(t) {
			continue
		}
		if err := s.spillTable(t); err != nil {
			return err
		}
	}
	return nil
}

// spillable reports whether the block's changes to w may go to disk.
func (s *session) spillable(w *tableWrite) bool {
	d := s.e.current(w.d)
	return d.Kind == w.d.Kind && d.Mirror == "" && d.Envelope() == "" && bulkTableOK(s.e, d)
}

// spillTable moves the block's statements of w in memory to its spill.
func (s *session) spillTable(w *tableWrite) error {
	if w.spill == nil {
		if s.tx.spill == nil {
			db, err := s.e.openScratch()
			if err != nil {
				return err
			}
			s.tx.spill = &blockSpill{db: db}
		}
		cols, err := w.d.Schema()
		if err != nil {
			return err
		}
		ts := &tableSpill{s: s.tx.spill, id: w.d.ID, ncols: len(cols)}
		if len(w.d.PrimaryKey) > 0 {
			ts.key = pkIndexes(w.d, cols)
		}
		if err := ts.append(s.tx.snap.pending[w.d.ID]); err != nil {
			return err
		}
		ts.own = s.tx.spill.next
		w.spill = ts
	}
	for _, stmt := range w.stmts {
		w.spill.stmts = append(w.spill.stmts, w.spill.s.next)
		if err := w.spill.append(exec.ChangelogOrder([][]exec.Change{stmt})); err != nil {
			return err
		}
	}
	clear(w.stmts)
	w.stmts, w.memBytes = nil, 0
	return nil
}

// stmtCount is the number of statements the block ran on w.
func (w *tableWrite) stmtCount() int {
	n := len(w.stmts)
	if w.spill != nil {
		n += len(w.spill.stmts)
	}
	return n
}

// keepStmts undoes the block's statements on w past the first keep.
func (w *tableWrite) keepStmts(keep int) error {
	spilled := 0
	if w.spill != nil {
		spilled = len(w.spill.stmts)
	}
	if keep >= spilled {
		w.stmts = w.stmts[:keep-spilled]
	} else {
		if err := w.spill.truncate(w.spill.stmts[keep]); err != nil {
			return err
		}
		w.spill.stmts = w.spill.stmts[:keep]
		w.stmts = nil
	}
	w.memBytes = 0
	for _, stmt := range w.stmts {
		for _, ch := range stmt {
			w.memBytes += changeBytes(ch.Row)
		}
	}
	return nil
}

// unspill reads w's spilled changes back into memory, as its first
// statement: for a COMMIT that must check them whole (the table took a
// UNIQUE constraint or a foreign key after they spilled).
func (w *tableWrite) unspill() error {
	if w.spill == nil {
		return nil
	}
	var all []exec.Change
	if err := w.spill.eachOwn(changeBatchRows, func(batch []exec.Change) error {
		all = append(all, batch...)
		return nil
	}); err != nil {
		return err
	}
	w.stmts = append([][]exec.Change{all}, w.stmts...)
	w.spill = nil
	return nil
}

// spillOf returns the spilled part of the block's changes to table id, nil
// for none.
func (t *txn) spillOf(id uint32) *tableSpill {
	for _, w := range t.tables {
		if w.d.ID == id {
			return w.spill
		}
	}
	return nil
}

// closeSpill removes the block's scratch store.
func (t *txn) closeSpill(s *session) {
	if t.spill == nil {
		return
	}
	if err := t.spill.db.Close(); err != nil {
		s.e.log.Warn("remove a transaction's spilled changes", "err", err)
	}
	t.spill = nil
}

// txTableState is table d as a statement of the block sees it.
func (s *session) txTableState(snap *txSnapshot, d *catalog.Descriptor) (*tableState, error) {
	ts, err := newTableState(d, snap.snap, s.tx.pendingFor(d.ID))
	if err != nil {
		return nil, err
	}
	ts.spill = s.tx.spillOf(d.ID)
	return ts, nil
}
