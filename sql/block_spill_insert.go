package sql

import (
	"context"
	"fmt"

	"streamdb/binder"
	"streamdb/catalog"
	"streamdb/exec"
	"streamdb/meta"
	"streamdb/plan"
	"streamdb/sqlerr"
	"streamdb/types"
)

// An INSERT ... SELECT inside a block into a table that may spill
// (spillsInsert) collects the query's rows only while they fit in what is
// left of the block's transaction_spill_memory; a statement that fits is
// kept as any other (insertIntoTable). Past that, the block's changes to
// the table spill and the statement streams into the spill a batch at a
// time: each batch is checked (NOT NULL, CHECK, a key the table, the
// block or an earlier batch holds: 23505; a foreign key's parent: 23503)
// and appended, so neither the
// query's result nor the statement's changes are ever held whole. A
// failure undoes what the statement appended, as a failed statement
// leaves nothing.

// spillsInsert reports whether an INSERT ... SELECT (reading what reads
// reads) into table d streams into the block's spill when it is large.
// A query that reads d itself would see the rows the statement spilled,
// so it is collected first.
func (s *session) spillsInsert(d *catalog.Descriptor, reads plan.Node) bool {
	if s.tx == nil || d.Kind != catalog.KindTable || s.spillLimit() <= 0 {
		return false
	}
	for _, src := range plan.Sources(reads) {
		if src.ID == d.ID {
			return false
		}
	}
	return s.spillable(&tableWrite{d: d})
}

// blockInsert is the state of one INSERT ... SELECT streaming into a
// block's spill.
type blockInsert struct {
	s       *session
	ctx     context.Context
	d       *catalog.Descriptor
	room    int64       // what is left of the block's budget
	held    []types.Row // rows collected while they fit
	heldMem int64
	// w and ts once the statement spills; start is its first change's
	// seq there.
	w       *tableWrite
	ts      *tableState
	snap    *meta.TxSnapshot
	gen     []plan.GeneratedColumn
	start   uint64
	written func([]types.Row) error
	n       int64
}

// blockInsertQuery runs an INSERT ... SELECT into table d inside a block
// (spillsInsert); written is the statement's RETURNING.
func (s *session) blockInsertQuery(ctx context.Context, d *catalog.Descriptor, query *adHoc, vals []types.Datum,
	convert func(types.Row) (types.Row, error), written func([]types.Row) error) (string, error) {
	room := s.spillLimit()
	for _, w := range s.tx.tables {
		room -= w.memBytes
	}
	ins := &blockInsert{s: s, ctx: ctx, d: d, room: room, written: written}
	batch := &batchingWriter{convert: convert, emit: ins.add, rows: make([]types.Row, 0, bulkBatchRows)}
	s.e.stateMu.RLock()
	_, err := query.runLocked(ctx, vals, batch)
	if err == nil {
		err = batch.flush()
	}
	s.e.stateMu.RUnlock()
	if err != nil {
		return "", ins.undo(err)
	}
	if ins.w == nil {
		if err := s.insertIntoTable(ctx, d, ins.held); err != nil {
			return "", err
		}
		return fmt.Sprintf("INSERT 0 %d", len(ins.held)), written(ins.held)
	}
	return fmt.Sprintf("INSERT 0 %d", ins.n), nil
}

// add takes a batch of the query's rows (the slice is reused after).
func (ins *blockInsert) add(rows []types.Row) error {
	if ins.w == nil {
		ins.held = append(ins.held, rows...)
		for _, r := range rows {
			ins.heldMem += changeBytes(r)
		}
		if ins.heldMem <= ins.room {
			return nil
		}
		if err := ins.begin(); err != nil {
			return err
		}
		held := ins.held
		ins.held = nil
		for i := 0; i < len(held); i += bulkBatchRows {
			if err := ins.stream(held[i:min(i+bulkBatchRows, len(held))]); err != nil {
				return err
			}
		}
		return nil
	}
	return ins.stream(rows)
}

// begin spills the block's changes to the table and starts the
// statement there. Holding stateMu shared.
func (ins *blockInsert) begin() error {
	s := ins.s
	snap, err := s.txSnapshot()
	if err != nil {
		return err
	}
	if cur, ok := s.e.lookup(ins.d.Name); !ok || cur.ID != ins.d.ID {
		return sqlerr.New(sqlerr.UndefinedTable, "relation %q does not exist", ins.d.Name)
	}
	d := s.e.withCurrentIndexesOf(ins.d)
	w := s.tx.table(d)
	if err := s.spillTable(w); err != nil {
		return err
	}
	ts, err := s.txTableState(snap, d)
	if err != nil {
		return err
	}
	if ins.gen, err = binder.BindGenerated(d, ts.cols); err != nil {
		return err
	}
	ins.d, ins.w, ins.ts, ins.snap, ins.start = d, w, ts, snap, w.spill.s.next
	w.spill.stmts = append(w.spill.stmts, ins.start)
	return nil
}

// stream checks a batch against the table as the block sees it (the
// statement's earlier batches included) and appends it to the spill.
func (ins *blockInsert) stream(rows []types.Row) error {
	changes := make([]exec.Change, len(rows))
	for i, r := range rows {
		changes[i] = exec.Change{Row: r, Sign: exec.Insert}
	}
	if err := computeGenerated(ins.gen, changes); err != nil {
		return err
	}
	if err := checkTableChanges(ins.d, ins.ts.cols, changes, ins.ts.KeyTaken); err != nil {
		return err
	}
	if err := checkUniqueIndexes(ins.d, ins.ts, changes); err != nil {
		return err
	}
	base, err := ins.s.txUniqueBase(ins.ts, changes)
	if err != nil {
		return err
	}
	if err := ins.s.e.checkConstraints(ins.ctx, ins.ts, base, changes, ins.s.deferredCheck()); err != nil {
		return err
	}
	// An insertion sets off no referential action: its foreign keys are
	// checks only.
	if _, err := ins.s.txForeignKeys(ins.ctx, ins.snap, ins.d, changes); err != nil {
		return err
	}
	if err := ins.w.spill.append(changes); err != nil {
		return err
	}
	ins.n += int64(len(rows))
	return ins.written(rows)
}

// undo removes what a failed statement appended to the spill.
func (ins *blockInsert) undo(err error) error {
	if ins.w == nil {
		return err
	}
	sp := ins.w.spill
	sp.stmts = sp.stmts[:len(sp.stmts)-1]
	if terr := sp.truncate(ins.start); terr != nil {
		ins.s.tx.failed = true
		return terr
	}
	return err
}
