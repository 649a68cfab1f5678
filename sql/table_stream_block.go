package sql

import (
	"context"

	"streamdb/binder"
	"streamdb/catalog"
	"streamdb/exec"
	"streamdb/expr"
	"streamdb/meta"
	"streamdb/metrics"
	"streamdb/sqlerr"
	"streamdb/types"
)

// Inside a transaction block, an UPDATE or DELETE that would stream
// outside one (streamsChange: its WHERE pins no key, it keeps every
// primary key or the table's key moves stream, the table's unique and
// foreign keys can be checked a batch at a time) streams too: the rows come from an iterator over the table
// as the block sees it (its snapshot, its spill, its changes in memory),
// each is tested and changed as it comes, and the changes are checked
// and go into the block a batch at a time (blockStatement), spilling with
// the block's others once they pass transaction_spill_memory. So neither
// the rows read nor the statement's changes are held whole.
//
// The statement never reads its own changes: the rows come from a view
// of the block taken before its first change (the spill read up to the
// seq it had then, tableSpill.statementView; the changes in memory as
// they were), so UPDATE t SET v = v + 1 changes each row once.
//
// The checks are those of the autocommit stream (streamChange), against
// the table as the block sees it before the statement: NOT NULL, CHECK
// and the primary key per batch, UNIQUE across the batches
// (streamUnique), foreign keys a batch at a time (streamFK), the
// constraints the block deferred (SET CONSTRAINTS) skipped until COMMIT,
// which checks the block's changes against the table as it is then.
// A statement that fails leaves the block as it was before it: what it
// appended to the spill is removed.
//
// Subqueries in its SET and WHERE read the block as it was before the
// statement too: while it streams, the block's reads (txRead) see the
// spill without what the statement appended to it (txn.streaming,
// readSpillOf), and the statement's changes in memory are its own until
// it ends (blockStatement.mem). So an uncorrelated subquery, run at the
// first row, and a correlated one, run per distinct outer values as the
// rows come, both see the block's earlier changes and none of the
// statement's, as in PostgreSQL.
//
// An UPDATE that moves rows to new primary keys is checked by streamPK
// as in autocommit, and a row moving onto a key whose holder the scan
// has not reached is held back and goes into the block after every
// deletion of the statement: the block's changes to a keyed table apply
// in order, an insertion only where the key is free.
//
// A table without a primary key streams with its unique keys as in
// autocommit: streamUnique names a row by its whole value, and reads the
// holders of a value through the block's spill and changes in memory.

// streamsBlockChange reports whether an UPDATE or DELETE of table d
// inside this session's block streams (streamBlockChange); cond, sets as
// for streamsChange.
func (s *session) streamsBlockChange(d *catalog.Descriptor, cond expr.Expr, sets []expr.Expr) bool {
	if s.tx == nil || d.Kind != catalog.KindTable || d.Mirror != "" || d.Envelope() != "" {
		return false
	}
	cur := s.e.current(d)
	if !streamChangeTableOK(s.e, cur) || !s.spillable(&tableWrite{d: d}) {
		return false
	}
	if p, _ := s.e.streamFKPlanFor(cur); p.acts || p.self != nil {
		return false // actions and self-references stream in autocommit only
	}
	return streamableChange(s.e.withCurrentIndexesOf(d), cond, sets, blockKeyMovesStream(s.e, cur))
}

// blockKeyMovesStream reports whether an UPDATE inside a block that moves
// primary keys of table d streams: as in autocommit (keyMovesStream), and
// no foreign key references d, since the block has no whole-statement
// check of the keys it lets go (streamFKMoves is autocommit's).
func blockKeyMovesStream(e *Engine, d *catalog.Descriptor) bool {
	p, _ := e.streamFKPlanFor(d)
	return keyMovesStream(e, d) && referencedBy(p.links, d) == nil
}

// referencedBy returns, when one of links references table d, the error
// that fails a block's row moving to a new key of d (the catalog gained
// the reference after the statement was planned); nil otherwise.
func referencedBy(links []fkLink, d *catalog.Descriptor) error {
	for _, l := range links {
		if l.parent.ID == d.ID {
			return sqlerr.New(sqlerr.SerializationFailure, "table %q was referenced by a foreign key while the UPDATE began", d.Name).
				WithHint("Retry the statement.")
		}
	}
	return nil
}

// streamBlockChange runs an UPDATE or DELETE of table d inside the
// session's block a batch at a time; change and written are
// streamChange's. It returns the number of rows changed.
func (s *session) streamBlockChange(ctx context.Context, d *catalog.Descriptor,
	change func(row types.Row, out []exec.Change) ([]exec.Change, bool, error), written func([]exec.Change) error) (int64, error) {
	snap, err := s.txSnapshot()
	if err != nil {
		return 0, err
	}
	e := s.e
	e.stateMu.RLock()
	defer e.stateMu.RUnlock()
	if cur, ok := e.lookup(d.Name); !ok || cur.ID != d.ID {
		return 0, sqlerr.New(sqlerr.UndefinedTable, "relation %q does not exist", d.Name)
	}
	d = e.withCurrentIndexesOf(d)
	ts, err := s.txTableState(snap, d)
	if err != nil {
		return 0, err
	}
	if ts.spill != nil {
		ts.setSpill(ts.spill.statementView())
	}
	gen, err := binder.BindGenerated(d, ts.cols)
	if err != nil {
		return 0, err
	}
	cur := e.current(d)
	unique := newStreamUnique(s.undeferredUniques(cur), ts, func(n int) keySets { return e.state.NewKeySets(n) })
	if unique != nil {
		defer unique.close()
	}
	fk := s.blockStreamFK(cur, snap, ts)
	plan, _ := e.streamFKPlanFor(cur)
	pk := newStreamPK(ts, referencedBy(plan.links, cur), func(n int) keySets { return e.state.NewKeySets(n) }, e.openScratch)
	if pk != nil {
		defer pk.close()
	}
	checks := newRowChecks(cur, ts.cols)
	stmt := &blockStatement{s: s, w: s.tx.table(d)}
	s.tx.streaming = stmt
	defer func() { s.tx.streaming = nil }()
	check := func(batch []exec.Change) error {
		if err := computeGenerated(gen, batch); err != nil {
			return err
		}
		if pk == nil {
			if err := checkTableChanges(d, ts.cols, batch, ts.KeyTaken); err != nil {
				return err
			}
		} else {
			if err := checkInsertedNotNull(d, ts.cols, batch); err != nil {
				return err
			}
			if err := pk.batch(batch); err != nil {
				return err
			}
		}
		if err := checks.check(batch); err != nil {
			return err
		}
		if unique != nil {
			if err := unique.batch(batch); err != nil {
				return err
			}
		}
		if fk != nil {
			return fk.batch(ctx, batch)
		}
		return nil
	}
	// addChecked takes a checked batch into the block, but for the
	// insertions pk holds back.
	addChecked := func(batch []exec.Change) error {
		if pk != nil {
			var err error
			if batch, err = pk.split(batch); err != nil {
				return err
			}
		}
		if err := written(batch); err != nil {
			return err
		}
		return stmt.add(batch)
	}
	add := func(batch []exec.Change) error {
		if err := check(batch); err != nil {
			return err
		}
		return addChecked(batch)
	}
	n, batch, err := changeBatches(ctx, ts, change, add)
	if err == nil && len(batch) > 0 {
		err = add(batch)
	}
	if err == nil && pk != nil {
		err = pk.finish(ctx, ts.EachRow)
	}
	if err == nil && unique != nil {
		err = unique.finish(ctx, ts.EachRow)
	}
	if err == nil && fk != nil {
		err = fk.finish(ctx)
	}
	if err == nil && pk != nil {
		// Every deletion is in: the held insertions follow.
		err = pk.publishHeld(func(held []exec.Change) error {
			pk.holdBack = pk.holdBack[:0]
			return addChecked(held)
		})
	}
	if err != nil {
		return 0, stmt.undo(err)
	}
	if err := stmt.finish(); err != nil {
		return 0, err
	}
	metrics.BlockStreamedChanges.Inc()
	return n, nil
}

// undeferredUniques returns table d with only the unique indexes a
// statement of the block checks: those of UNIQUE constraints the block
// deferred wait for its COMMIT.
func (s *session) undeferredUniques(d *catalog.Descriptor) *catalog.Descriptor {
	var keep []catalog.Index
	dropped := false
	for i := range d.Indexes {
		if c := constraintOf(d, &d.Indexes[i]); c != nil && s.deferred(*c) {
			dropped = true
			continue
		}
		keep = append(keep, d.Indexes[i])
	}
	if !dropped {
		return d
	}
	v := *d
	v.Indexes = keep
	return &v
}

// blockStreamFK returns the foreign key check of a streaming statement
// of the block on table d (read as ts), the other tables read as the
// block sees them; nil when d has no foreign key at either end.
func (s *session) blockStreamFK(d *catalog.Descriptor, snap *meta.TxSnapshot, ts *tableState) *streamFK {
	states := map[uint32]*tableState{}
	fk := s.newStreamFK(d, ts, func(t *catalog.Descriptor) (*tableState, error) {
		if t.ID == d.ID {
			return ts, nil
		}
		if st, ok := states[t.ID]; ok {
			return st, nil
		}
		// Not closed: the snapshot is the block's. Read up to now: the
		// block's changes there may move to the spill as the statement
		// spills.
		st, err := s.txTableState(snap, t)
		if err != nil {
			return nil, err
		}
		if st.spill != nil {
			st.setSpill(st.spill.statementView())
		}
		states[t.ID] = st
		return st, nil
	}, func(n int) keySets { return s.e.state.NewKeySets(n) })
	if fk != nil {
		fk.run.deferring = true
	}
	return fk
}

// blockStatement takes one streaming statement's changes to a table into
// its block: in memory while the block's changes fit in its
// transaction_spill_memory, then, with the block's others, on disk, where
// the rest of the statement goes as it comes. Either way the statement
// is one of the block's statements on the table (what SAVEPOINT counts).
type blockStatement struct {
	s        *session
	w        *tableWrite
	mem      []exec.Change // the changes in memory, in changelog order per batch
	memBytes int64
	spilled  bool
	start    uint64 // the seq of the statement's first change in the spill
}

// add takes a checked batch of the statement's changes.
func (b *blockStatement) add(batch []exec.Change) error {
	ordered := exec.ChangelogOrder([][]exec.Change{batch})
	if b.spilled {
		return b.w.spill.append(ordered)
	}
	b.mem = append(b.mem, ordered...)
	for _, ch := range ordered {
		b.memBytes += changeBytes(ch.Row)
	}
	limit := b.s.spillLimit()
	if limit <= 0 || b.s.txHeldBytes()+b.memBytes <= limit {
		return nil
	}
	if err := b.s.spillTable(b.w); err != nil {
		return err
	}
	if err := b.s.spillAll(); err != nil {
		return err
	}
	sp := b.w.spill
	b.start, b.spilled = sp.s.next, true
	sp.stmts = append(sp.stmts, b.start)
	mem := b.mem
	b.mem, b.memBytes = nil, 0
	return sp.append(mem)
}

// spillStart is the seq of the statement's first change in the spill:
// the spill's next while none of its changes is there.
func (b *blockStatement) spillStart() uint64 {
	if b.spilled {
		return b.start
	}
	return b.s.tx.spill.next
}

// finish keeps the statement in the block once it has succeeded.
func (b *blockStatement) finish() error {
	if b.spilled {
		return nil
	}
	b.w.stmts = append(b.w.stmts, b.mem)
	return b.s.noteTxWrite(b.w, b.mem)
}

// undo removes what a failed statement put into the spill and returns
// err.
func (b *blockStatement) undo(err error) error {
	if !b.spilled {
		return err
	}
	sp := b.w.spill
	sp.stmts = sp.stmts[:len(sp.stmts)-1]
	if terr := sp.truncate(b.start); terr != nil {
		b.s.tx.failed = true
		return terr
	}
	return err
}
