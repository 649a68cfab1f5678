package sql

import (
	"encoding/binary"
	"fmt"
	"slices"

	"streamdb/catalog"
	"streamdb/exec"
	"streamdb/meta"
	"streamdb/metrics"
)

// defaultTransactionSpillMemory is transaction_spill_memory's default.
const defaultTransactionSpillMemory = "64MB"

// A block spills the changes of every table but a mirror or an envelope
// table (whose writes are refused at COMMIT anyway), and the rows it
// inserts into streams (block_spill_streams.go). A table whose
// unique keys or foreign keys changed since its changes spilled (DDL in
// the block) has them read back into memory (unspillStale), so that
// every check stays exact.

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
	return s.spillOverBudget()
}

// noteTxRows accounts for rows just added to w, a stream's, and spills
// the block's changes once they pass the session's budget.
func (s *session) noteTxRows(w *streamWrite, msgs [][]byte) error {
	for _, m := range msgs {
		w.memBytes += streamMsgBytes(m)
	}
	return s.spillOverBudget()
}

// spillOverBudget spills what the block holds in memory once it passes
// the session's transaction_spill_memory.
func (s *session) spillOverBudget() error {
	limit := s.spillLimit()
	if limit <= 0 || s.txHeldBytes() <= limit {
		return nil
	}
	return s.spillAll()
}

// txHeldBytes estimates what the block holds in memory.
func (s *session) txHeldBytes() int64 {
	var held int64
	for _, t := range s.tx.tables {
		held += t.memBytes
	}
	for _, w := range s.tx.streams {
		held += w.memBytes
	}
	return held
}

// spillAll moves what the block holds in memory to its spill.
func (s *session) spillAll() error {
	for _, t := range s.tx.tables {
		if len(t.stmts) == 0 || !s.spillable(t) {
			continue
		}
		if err := s.spillTable(t); err != nil {
			return err
		}
	}
	for _, w := range s.tx.streams {
		if err := s.spillStream(w); err != nil {
			return err
		}
	}
	return nil
}

// openSpill returns the block's scratch store, opening it at the first
// call.
func (t *txn) openSpill(s *session) (*blockSpill, error) {
	if t.spill == nil {
		db, err := s.e.openScratch()
		if err != nil {
			return nil, err
		}
		t.spill = &blockSpill{db: db}
	}
	return t.spill, nil
}

// spillable reports whether the block's changes to w may go to disk.
func (s *session) spillable(w *tableWrite) bool {
	d := s.e.current(w.d)
	if d.Kind != w.d.Kind || d.Mirror != "" || d.Envelope() != "" {
		return false
	}
	_, err := d.Schema()
	return err == nil
}

// spillStale reports whether w's spill no longer keeps its changes by
// the column sets the table's checks look them up by now.
func (e *Engine) spillStale(w *tableWrite) bool {
	if w.spill == nil {
		return false
	}
	d := e.current(w.d)
	cols, err := d.Schema()
	if err != nil {
		return true
	}
	return !slices.EqualFunc(e.spillValueSets(d, cols), w.spill.sets, slices.Equal)
}

// unspillStale reads w's spilled changes back into memory when the
// spill is stale (spillStale).
func (s *session) unspillStale(w *tableWrite) error {
	if !s.e.spillStale(w) {
		return nil
	}
	return s.tx.unspill(w)
}

// spillTable moves the block's statements of w in memory to its spill.
func (s *session) spillTable(w *tableWrite) error {
	if w.spill == nil {
		bs, err := s.tx.openSpill(s)
		if err != nil {
			return err
		}
		cols, err := w.d.Schema()
		if err != nil {
			return err
		}
		ts := &tableSpill{s: bs, id: w.d.ID, ncols: len(cols)}
		if len(w.d.PrimaryKey) > 0 {
			ts.key = pkIndexes(w.d, cols)
		}
		ts.sets = s.e.spillValueSets(s.e.current(w.d), cols)
		if err := ts.append(s.tx.snap.Pending[w.d.ID]); err != nil {
			return err
		}
		ts.own = s.tx.spill.next
		w.spill = ts
	}
	metrics.TransactionSpills.WithLabelValues("table").Inc()
	for _, stmt := range w.stmts {
		if len(stmt) > 0 {
			if dn, ok := s.tx.doNothing[&stmt[0]]; ok {
				if w.spill.doNothing == nil {
					w.spill.doNothing = map[int]doNothingStmt{}
				}
				w.spill.doNothing[len(w.spill.stmts)] = dn
				delete(s.tx.doNothing, &stmt[0])
			}
		}
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
		for i := range w.spill.doNothing {
			if i >= keep {
				delete(w.spill.doNothing, i)
			}
		}
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

// unspill reads w's spilled changes back into memory, statement by
// statement, with their ON CONFLICT DO NOTHING marks: for a table whose
// keys changed since they spilled (unspillStale).
func (t *txn) unspill(w *tableWrite) error {
	sp := w.spill
	if sp == nil {
		return nil
	}
	metrics.TransactionSpillReads.Inc()
	stmts := make([][]exec.Change, len(sp.stmts))
	i := -1
	err := sp.s.db.Scan(spillLogKey(sp.id, sp.own), spillLogKey(sp.id+1, 0), false, func(k, v []byte) (bool, error) {
		seq := binary.BigEndian.Uint64(k[len(k)-8:])
		for i+1 < len(sp.stmts) && sp.stmts[i+1] <= seq {
			i++
		}
		n, w := binary.Uvarint(v[1:])
		if w <= 0 || i < 0 {
			return false, fmt.Errorf("a transaction's spilled change is damaged")
		}
		ch, err := sp.decode(append(v[:1:1], v[1+w+int(n):]...))
		stmts[i] = append(stmts[i], ch)
		return err == nil, err
	})
	if err != nil {
		return err
	}
	for i, dn := range sp.doNothing {
		if len(stmts[i]) > 0 {
			if t.doNothing == nil {
				t.doNothing = map[*exec.Change]doNothingStmt{}
			}
			t.doNothing[&stmts[i][0]] = dn
		}
	}
	w.stmts = append(stmts, w.stmts...)
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

// readSpillOf is spillOf for a query the block runs (a statement's
// subqueries): while a statement streams its changes into the block
// (txn.streaming), without the changes it appended to the spill, as
// PostgreSQL's subqueries read the table as it was before the statement.
func (t *txn) readSpillOf(id uint32) *tableSpill {
	sp := t.spillOf(id)
	if sp == nil || t.streaming == nil {
		return sp
	}
	v := *sp
	v.until, v.bounded = t.streaming.spillStart(), true
	return &v
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
func (s *session) txTableState(snap *meta.TxSnapshot, d *catalog.Descriptor) (*tableState, error) {
	for _, w := range s.tx.tables {
		if w.d.ID == d.ID {
			if err := s.unspillStale(w); err != nil {
				return nil, err
			}
		}
	}
	ts, err := newTableState(d, snap.Snap, s.tx.pendingFor(d.ID))
	if err != nil {
		return nil, err
	}
	ts.setSpill(s.tx.spillOf(d.ID))
	return ts, nil
}
