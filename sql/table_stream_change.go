package sql

import (
	"context"
	"errors"

	"streamdb/binder"
	"streamdb/catalog"
	"streamdb/exec"
	"streamdb/expr"
	"streamdb/sqlerr"
	"streamdb/types"
)

// An autocommit UPDATE or DELETE whose WHERE does not pin the rows it
// reads (rowsWhere would scan the whole table for it) streams: the rows come
// from an iterator over its snapshot with the log's changes applied
// (tableState.eachRow), each is tested and changed as it comes, and the
// changes go out changeBatchRows at a time, as a streaming COPY's do
// (streamingWrite): checked, then published as the data of one
// transaction, whose reference and decision after the last batch are the
// commit point. Nothing of it is visible before the decision, and the
// table's pipeline applies it in one epoch, so views see all of it or
// none. The table's log lock is held throughout, so no other commit to
// the table is computed meanwhile: the statement reads the table as it
// is, and there is nothing to conflict with.
//
// A statement that changes no more than one batch of rows whose changes
// fit in one message is committed as any small commit is, through the
// table's queue (no transaction records, no wait for the table).
//
// It streams where each row's change can be checked as it comes: the
// foreign keys at either end, if any, are checked a batch at a time
// (table_stream_fk.go); the UNIQUE constraints and unique indexes, and
// the primary key when the statement moves rows to new keys, across the
// batches (table_stream_unique.go, table_stream_pk.go). A table without
// a primary key streams with unique keys and foreign keys, but none to
// itself. Other
// statements read the rows their WHERE may hold for first (changeTable).

// changeBatchRows is the most changes checked and published at a time.
const changeBatchRows = bulkBatchRows

// streamsChange reports whether an UPDATE or DELETE of table d by this
// session streams (streamChange): outside a transaction block, into a
// table that takes streaming commits, with a WHERE (cond) that does not
// pin a few rows by key or index; when it may move rows to new primary
// keys or values other tables reference (sets: the UPDATE's
// assignments, nil for none), of a table that does not reference itself
// and whose referencing foreign keys have no ON UPDATE action.
func (s *session) streamsChange(d *catalog.Descriptor, cond expr.Expr, sets []expr.Expr) bool {
	if !s.canStreamChange(d) {
		return false
	}
	cur := s.e.current(d)
	if !streamableChange(s.e.withCurrentIndexesOf(d), cond, sets, keyMovesStream(s.e, cur)) {
		return false
	}
	// Values other tables reference move only where streamFKMoves can
	// follow them.
	links, _, _ := s.e.streamFKLinksWith(cur, true)
	return !assignsReferenced(links, cur, sets) || referencedMovesStream(links, cur)
}

// streamableChange reports whether an UPDATE or DELETE of table d (with
// its current indexes) whose WHERE is cond and assignments sets can read
// its rows from an iterator over the table: cond does not pin a few rows
// by key or index, and the statement leaves every primary key column as
// it is, or keyMoves (the caller can stream rows moved to new keys).
func streamableChange(d *catalog.Descriptor, cond expr.Expr, sets []expr.Expr, keyMoves bool) bool {
	if cond != nil && expr.VolatileCall(cond) == "" && readsPinnedRows(d, cond) {
		return false
	}
	return keyMoves || !changesPrimaryKey(d, sets)
}

// canStreamChange reports whether an UPDATE or DELETE of table d by this
// session can stream with the checks streamChange makes.
func (s *session) canStreamChange(d *catalog.Descriptor) bool {
	if s.tx != nil || d.Kind != catalog.KindTable || d.Mirror != "" || d.Envelope() != "" {
		return false
	}
	return autocommitStreamOK(s.e, s.e.current(d))
}

// autocommitStreamOK is streamChangeTableOK for an autocommit statement,
// which checks the values it moves of the table's foreign keys over the
// whole statement (streamFKMoves): foreign keys into the table by any
// unique key, and, for a table without a primary key, foreign keys at
// either end but one to itself.
func autocommitStreamOK(e *Engine, d *catalog.Descriptor) bool {
	p, ok := e.streamFKPlanWith(d, true)
	return ok && (len(d.PrimaryKey) > 0 || p.self == nil)
}

// streamChangeTableOK reports whether table d (as the catalog has it)
// takes a streaming UPDATE or DELETE: unique keys of any kind, and, with
// a primary key, foreign keys at either end that streamFK checks
// (streamFKLinks); without one, no foreign key.
func streamChangeTableOK(e *Engine, d *catalog.Descriptor) bool {
	if len(d.PrimaryKey) == 0 {
		_, linked := e.fkLinked([]*catalog.Descriptor{d})
		return !hasConstraint(d, "f") && linked == nil
	}
	_, _, ok := e.streamFKLinks(d)
	return ok
}

// readsPinnedRows reports whether rowsWhere reads only the rows a key or
// an index points to for cond, over table d.
func readsPinnedRows(d *catalog.Descriptor, cond expr.Expr) bool {
	if len(d.PrimaryKey) == 0 {
		return false
	}
	scan, err := tableScan(d)
	if err != nil {
		return false
	}
	scan.StoredKey = exec.TableKey(scan)
	if _, ok := exec.PinnedKeys(cond, scan); ok {
		return true
	}
	_, ok := exec.ChooseIndex(cond, scan)
	return ok
}

// streamChange runs an autocommit UPDATE or DELETE of table d as one
// commit without holding the table or the statement's changes whole.
// change appends to out the changes it makes of one row of the table
// (none when the statement's WHERE does not hold for the row); written
// is handed each batch of changes once it is checked, and the statement's
// RETURNING reads it, before the commit as in PostgreSQL. It returns the
// number of rows changed.
func (s *session) streamChange(ctx context.Context, d *catalog.Descriptor, what string,
	change func(row types.Row, out []exec.Change) ([]exec.Change, bool, error), written func([]exec.Change) error) (int64, error) {
	_, linked, _ := s.e.streamFKLinksWith(s.e.current(d), true)
	// still tells whether the table, as the catalog has it once locked,
	// takes the write and links the same tables.
	still := func(cur *catalog.Descriptor) bool {
		_, now, _ := s.e.streamFKLinksWith(cur, true)
		return autocommitStreamOK(s.e, cur) && sameTables(now, linked)
	}
	sw, err := s.openStreamingWrite(ctx, d, what, still, linked)
	if err != nil {
		return 0, err
	}
	defer sw.close()
	ts, b := sw.ts, sw.b
	gen, err := binder.BindGenerated(sw.d, ts.cols)
	if err != nil {
		return 0, err
	}
	cur := sw.e.current(sw.d)
	unique := newStreamUnique(cur, ts, func(n int) keySets { return sw.e.state.NewKeySets(n) })
	if unique != nil {
		defer unique.close()
	}
	var refuse error
	if !keyMovesStream(sw.e, cur) {
		refuse = foreignKeysChanged(cur)
	}
	pk := newStreamPK(ts, refuse, func(n int) keySets { return sw.e.state.NewKeySets(n) }, sw.e.openScratch)
	if pk != nil {
		defer pk.close()
	}
	base := func(t *catalog.Descriptor) (*tableState, error) {
		if t.ID == sw.d.ID {
			return ts, nil
		}
		return sw.stateOf(t)
	}
	fk := s.newStreamFKFollowingMoves(cur, ts, base, func(n int) keySets { return sw.e.state.NewKeySets(n) })
	defer fk.close()
	if err := fk.useOverlay(sw, base); err != nil {
		return 0, err
	}
	if fk.changesOthers() {
		// The actions' changes go into the same commit.
		if b.also, err = fk.actions.tables(sw); err != nil {
			return 0, err
		}
	}
	// check fills in the generated columns of a batch and checks it: the
	// primary key (pk) and the other unique keys (unique) across batches,
	// the foreign keys a batch at a time (fk).
	check := func(batch []exec.Change) error {
		if err := computeGenerated(gen, batch); err != nil {
			return err
		}
		if err := checkInsertedNotNull(sw.d, ts.cols, batch); err != nil {
			return err
		}
		if pk != nil {
			if err := pk.batch(batch); err != nil {
				return err
			}
		}
		if err := checkRows(cur, ts.cols, batch); err != nil {
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
	// finish checks what only the whole statement tells, and reports a
	// foreign key violation after every other error.
	finish := func() error {
		if pk != nil {
			if err := pk.finish(ctx, ts.EachRow); err != nil {
				return err
			}
		}
		if unique != nil {
			if err := unique.finish(ctx, ts.EachRow); err != nil {
				return err
			}
		}
		if fk != nil {
			return fk.finish(ctx)
		}
		return nil
	}
	begun := false
	// publishChecked publishes a checked batch as the transaction's data,
	// but for the insertions pk holds back.
	publishChecked := func(batch []exec.Change) error {
		if !begun {
			if err := b.begin(); err != nil {
				return err
			}
			begun = true
		}
		if pk != nil {
			var err error
			if batch, err = pk.split(batch); err != nil {
				return err
			}
		}
		if err := b.add(exec.ChangelogOrder([][]exec.Change{fk.published(batch)})); err != nil {
			return err
		}
		if fk.changesOthers() {
			if err := fk.actions.publish(b.txn); err != nil {
				return err
			}
		}
		return written(batch)
	}
	publish := func(batch []exec.Change) error {
		if err := check(batch); err != nil {
			return err
		}
		return publishChecked(batch)
	}
	n, batch, err := changeBatches(ctx, ts, change, publish)
	if err == nil && !begun {
		if len(batch) == 0 {
			return 0, nil
		}
		var small bool
		checkAll := func(batch []exec.Change) error {
			if err := check(batch); err != nil {
				return err
			}
			return finish()
		}
		if fk.changesOthers() {
			// Not one message to one table: the actions may write others.
			small, err = false, check(batch)
		} else if small, err = sw.commitSmall(checkAll, batch); small && err == nil {
			return n, written(batch)
		}
		if err == nil {
			err = publishChecked(batch)
		}
	} else if err == nil && len(batch) > 0 {
		err = publish(batch)
	}
	if err == nil {
		err = finish()
	}
	if err == nil && pk != nil {
		// Every deletion is out: the held insertions follow.
		err = pk.publishHeld(func(held []exec.Change) error {
			pk.holdBack = pk.holdBack[:0]
			return publishChecked(held)
		})
	}
	if err == nil {
		err = b.flush()
	}
	if err != nil {
		if begun {
			// Nothing refers to the data published so far.
			b.abort()
		}
		return 0, err
	}
	if err := sw.commit(what); err != nil {
		return 0, err
	}
	return n, nil
}

// commitSmall checks changes and commits them through the table's queue
// as one message, as commitTable does, when they fit in one; small is
// false (and nothing is done but the check) when they do not.
func (sw *streamingWrite) commitSmall(check func([]exec.Change) error, changes []exec.Change) (small bool, err error) {
	if err := check(changes); err != nil {
		return true, err
	}
	ordered := exec.ChangelogOrder([][]exec.Change{changes})
	msgs, err := exec.EncodeChangelogChunks(sw.b.members, ordered, sw.b.limit)
	var tooLarge *exec.ErrChangelogTooLarge
	if errors.As(err, &tooLarge) {
		return true, sqlerr.New(sqlerr.ProgramLimitExceeded, "a row of table %q is %d bytes, over the limit of %d bytes for one row", sw.d.Name, tooLarge.Size, tooLarge.Limit).
			WithHint("The limit is the NATS server's max_payload.")
	}
	if err != nil {
		return true, err
	}
	if len(msgs) > 1 {
		return false, nil
	}
	// The queue is idle (openStreamingWrite waited for it), and the lock
	// is held until this is published: a commit computed after it waits.
	en := sw.log.Queue(ordered, msgs[0])
	return true, sw.log.Await(sw.d, en)
}

// changeBatches runs change over every row of ts, handing each full
// batch of changeBatchRows changes to flush (which may keep nothing of
// it: the batch is reused); it returns the number of rows change
// matched and the last batch, not yet flushed.
func changeBatches(ctx context.Context, ts *tableState, change func(row types.Row, out []exec.Change) ([]exec.Change, bool, error),
	flush func([]exec.Change) error) (int64, []exec.Change, error) {
	var n int64
	batch := make([]exec.Change, 0, changeBatchRows+2)
	err := ts.EachRow(ctx, func(row types.Row) error {
		var matched bool
		var err error
		if batch, matched, err = change(row, batch); err != nil || !matched {
			return err
		}
		n++
		if len(batch) < changeBatchRows {
			return nil
		}
		err = flush(batch)
		clear(batch)
		batch = batch[:0]
		return err
	})
	return n, batch, err
}
