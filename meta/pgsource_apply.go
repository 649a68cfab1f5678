package meta

import (
	"context"
	"fmt"
	"sync"
	"time"

	"streamdb/catalog"
	"streamdb/exec"
	"streamdb/expr"
	"streamdb/faults"
	"streamdb/pgcdc"
	"streamdb/sqlerr"
	"streamdb/types"
)

// maxBatchChanges bounds the source changes one commit applies: the
// applier takes every whole transaction that has arrived, up to it.
// maxQueuedChanges bounds the changes received and not yet applied: the
// reader waits for the applier when the queue holds this many, so memory
// follows this bound and not the count of transactions. A transaction
// larger than the bound is still queued whole (when the queue is empty),
// as a transaction is applied in one commit.
// idleConfirmInterval is how often an idle applier moves its position
// to the source's.
const (
	maxBatchChanges     = 10_000
	maxQueuedChanges    = 2 * maxBatchChanges
	idleConfirmInterval = time.Second
)

// changeQueue counts the changes of the transactions between the reader
// of the stream and the applier, and holds the reader back over its
// limit.
type changeQueue struct {
	limit int
	mu    sync.Mutex
	held  int
	freed chan struct{} // signalled when release makes room
}

func newChangeQueue(limit int) *changeQueue {
	return &changeQueue{limit: limit, freed: make(chan struct{}, 1)}
}

// acquire waits until n more changes fit (or the queue is empty) and
// counts them; it returns false when ctx ends first.
func (q *changeQueue) acquire(ctx context.Context, n int) bool {
	for {
		q.mu.Lock()
		if q.held == 0 || q.held+n <= q.limit {
			q.held += n
			q.mu.Unlock()
			return true
		}
		q.mu.Unlock()
		select {
		case <-q.freed:
		case <-ctx.Done():
			return false
		}
	}
}

// release uncounts n changes the applier is done with.
func (q *changeQueue) release(n int) {
	q.mu.Lock()
	q.held -= n
	q.mu.Unlock()
	select {
	case q.freed <- struct{}{}:
	default:
	}
}

// pgApplier follows one source.
type pgApplier struct {
	s    *PGSources
	name string
	src  *catalog.PGSource

	cancel context.CancelFunc
	done   chan struct{}

	mu         sync.Mutex
	status     string
	applied    pgcdc.LSN // the position the tables hold
	lastCommit time.Time // the source commit time of the newest transaction applied
	stream     *pgcdc.Stream
	pending    int // transactions received, not yet applied
	// schemaErr is why the source stopped at a column change it cannot
	// follow (pgsource_schema.go), until it applies past it.
	schemaErr string

	// aligned holds the relations whose tables the applier brought to
	// their columns (used by the applying goroutine only).
	aligned map[*pgcdc.Relation]bool
}

func (a *pgApplier) setStatus(st string) {
	a.mu.Lock()
	a.status = st
	a.mu.Unlock()
}

// run follows the source until ctx ends, starting again after a failure
// (the source restarting, the network) with a growing pause.
func (a *pgApplier) run(ctx context.Context) {
	defer close(a.done)
	backoff := time.Second
	for ctx.Err() == nil {
		started := time.Now()
		err := a.follow(ctx)
		if ctx.Err() != nil {
			return
		}
		if time.Since(started) > time.Minute {
			backoff = time.Second
		}
		a.setStatus("retrying: " + err.Error())
		if se, ok := err.(*sourceSchemaError); ok {
			a.mu.Lock()
			a.schemaErr = se.Error()
			a.mu.Unlock()
		}
		a.s.cfg.Log.Warn("PostgreSQL source stopped; retrying", "source", a.name, "err", err, "in", backoff)
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 30*time.Second)
	}
}

// follow applies the source's transactions from the position the tables
// hold, copying the tables afresh when the slot cannot serve it.
func (a *pgApplier) follow(ctx context.Context) error {
	a.setStatus("starting")
	pos, ok, err := a.position(ctx)
	if err != nil {
		return err
	}
	ep, err := a.s.cfg.Host.Endpoint(a.src)
	if err != nil {
		return err
	}
	info, err := pgcdc.DescribeSlot(ctx, ep, a.src.Slot)
	if err != nil {
		return err
	}
	// The slot has let go of what the tables lack (a ROLLBACK TO SAVEPOINT
	// took them back), or is gone: copy the tables again from a new slot.
	var why string
	switch {
	case !ok:
		why = "the tables hold no source position"
	case !info.Exists:
		why = "its replication slot " + a.src.Slot + " is gone"
	case pos < info.Confirmed:
		why = fmt.Sprintf("the tables are at %s, before the slot's %s (restored to a savepoint)", pos, info.Confirmed)
	}
	if why != "" {
		a.s.cfg.Log.Warn("PostgreSQL source copies its tables again", "source", a.name, "why", why)
		a.setStatus("copying: " + why)
		if pos, err = a.resync(ctx, ep); err != nil {
			return err
		}
	}
	// A fill recorded before a crash (pgsource_fill.go).
	if err := a.fillPending(ctx, ep); err != nil {
		return err
	}
	stream, err := pgcdc.StartStream(ctx, ep, a.src.Slot, a.src.Publication, pos)
	if err != nil {
		return err
	}
	rctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() {
		cancel()
		wg.Wait()
		stream.Close(context.Background())
		a.mu.Lock()
		a.stream, a.pending = nil, 0
		a.mu.Unlock()
	}()
	a.mu.Lock()
	a.stream, a.applied, a.status = stream, pos, "running"
	a.mu.Unlock()
	a.aligned = map[*pgcdc.Relation]bool{}

	txns := make(chan *pgcdc.Txn, 1024)
	queue := newChangeQueue(maxQueuedChanges)
	errc := make(chan error, 1)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			t, err := stream.Next(rctx)
			if err != nil {
				errc <- err
				return
			}
			if !queue.acquire(rctx, len(t.Changes)) {
				return
			}
			a.mu.Lock()
			a.pending++
			a.mu.Unlock()
			select {
			case txns <- t:
			case <-rctx.Done():
				return
			}
		}
	}()
	idleTick := time.NewTicker(idleConfirmInterval)
	defer idleTick.Stop()
	for {
		var batch []*pgcdc.Txn
		select {
		case t := <-txns:
			batch = append(batch, t)
		case err := <-errc:
			return err
		case <-ctx.Done():
			return ctx.Err()
		case <-idleTick.C:
			// With everything sent applied, the position moves to where
			// the source is: its WAL is let go, and a fast shutdown of
			// the source (which waits for its senders' clients to
			// confirm all) is not held up. The position is the one the
			// source said it was idle at, read with pending under mu:
			// the reader counts a transaction in pending before it reads
			// on, so every transaction ending at or before end is
			// applied. (A position read later may cover transactions
			// received since and not applied, which the batch below
			// would then skip as held.)
			a.mu.Lock()
			end, idle := stream.IdleEnd()
			idle = idle && a.pending == 0
			a.mu.Unlock()
			if idle && end > pos {
				faults.Sleep("pgsource-idle-confirm")
				if err := a.apply(ctx, nil, end); err != nil {
					return err
				}
				pos = end
				stream.Confirm(pos)
				a.mu.Lock()
				a.applied = pos
				a.mu.Unlock()
			}
			continue
		}
		n := len(batch[0].Changes)
	drain:
		for n < maxBatchChanges {
			select {
			case t := <-txns:
				batch = append(batch, t)
				n += len(t.Changes)
			default:
				break drain
			}
		}
		// A restart may be sent transactions the tables already hold.
		fresh := batch[:0]
		for _, t := range batch {
			if t.End > pos {
				fresh = append(fresh, t)
			}
		}
		if len(fresh) > 0 {
			if err := a.applyTxns(ctx, ep, fresh); err != nil {
				return err
			}
			pos = fresh[len(fresh)-1].End
			stream.Confirm(pos)
		}
		queue.release(n)
		a.mu.Lock()
		a.pending -= len(batch)
		a.applied = pos
		if len(fresh) > 0 {
			a.lastCommit = fresh[len(fresh)-1].CommitTime
		}
		a.mu.Unlock()
	}
}

// position reads the source position the progress table holds.
func (a *pgApplier) position(ctx context.Context) (pgcdc.LSN, bool, error) {
	rows, err := a.s.cfg.Host.Query(ctx, fmt.Sprintf("SELECT lsn FROM %s WHERE source = %s", expr.QuoteIdent(a.src.Progress), quoteLiteral(a.name)))
	if err != nil {
		return 0, false, err
	}
	if len(rows) == 0 {
		return 0, false, nil
	}
	lsn, err := pgcdc.ParseLSN(rows[0][0])
	return lsn, err == nil, err
}

// resync copies the tables again through a new slot of the same name and
// returns the position the copy is at.
func (a *pgApplier) resync(ctx context.Context, ep pgcdc.Endpoint) (pgcdc.LSN, error) {
	if err := pgcdc.DropSlot(ctx, ep, a.src.Slot); err != nil {
		return 0, err
	}
	names := make([][2]string, len(a.src.Tables))
	for i, t := range a.src.Tables {
		names[i] = [2]string{t.Schema, t.Name}
	}
	tables, err := pgcdc.DescribeTables(ctx, ep, a.src.Publication, names)
	if err != nil {
		return 0, err
	}
	slot, err := pgcdc.CreateSlot(ctx, ep, a.src.Slot)
	if err != nil {
		return 0, err
	}
	defer slot.Close(context.Background())
	if err := a.copySnapshot(ctx, slot, tables, true); err != nil {
		return 0, err
	}
	return slot.Point, nil
}

// table returns the mirror of source table schema.name, or nil when the
// source does not mirror it.
func (a *pgApplier) table(schema, name string) (*catalog.Descriptor, error) {
	for _, t := range a.src.Tables {
		if t.Schema == schema && t.Name == name {
			d, ok := a.s.cfg.Host.Lookup(t.Table)
			if !ok || d.Kind != catalog.KindTable || d.Mirror != a.name {
				return nil, sqlerr.New(sqlerr.UndefinedTable, "table %q of source %q does not exist", t.Table, a.name)
			}
			return d, nil
		}
	}
	return nil, nil
}

// apply applies whole source transactions in one commit, with the
// position end.
func (a *pgApplier) apply(ctx context.Context, txns []*pgcdc.Txn, end pgcdc.LSN) error {
	ops := map[*catalog.Descriptor][]rowOp{}
	var order []*catalog.Descriptor
	add := func(rel *pgcdc.Relation, op rowOp) error {
		d, err := a.table(rel.Schema, rel.Name)
		if err != nil || d == nil {
			// A table the publication gained later is not mirrored.
			return err
		}
		if _, ok := ops[d]; !ok {
			order = append(order, d)
		}
		op.cols = rel.Columns
		ops[d] = append(ops[d], op)
		return nil
	}
	for _, t := range txns {
		for _, ch := range t.Changes {
			if ch.Op == pgcdc.OpTruncate {
				for _, rel := range ch.Truncated {
					if err := add(rel, rowOp{op: pgcdc.OpTruncate}); err != nil {
						return err
					}
				}
				continue
			}
			if err := add(ch.Rel, rowOp{op: ch.Op, new: ch.New, old: ch.Old}); err != nil {
				return err
			}
		}
	}
	var writes []*MirrorWrite
	for _, d := range order {
		tableOps := ops[d]
		writes = append(writes, &MirrorWrite{Table: d, Compute: func(ctx context.Context, ts MirrorTable) ([]exec.Change, error) {
			return mirrorChanges(ctx, ts, tableOps, false)
		}})
	}
	progress, err := a.progressWrite(end)
	if err != nil {
		return err
	}
	return a.s.cfg.Host.CommitMirror(ctx, append(writes, progress))
}

// progressWrite sets the source's row of its progress table to lsn.
func (a *pgApplier) progressWrite(lsn pgcdc.LSN) (*MirrorWrite, error) {
	d, ok := a.s.cfg.Host.Lookup(a.src.Progress)
	if !ok || d.Kind != catalog.KindTable {
		return nil, sqlerr.New(sqlerr.UndefinedTable, "progress table %q of source %q does not exist", a.src.Progress, a.name)
	}
	row := types.Row{types.NewString(a.name), types.NewString(lsn.String()), types.NewTime(time.Now())}
	return &MirrorWrite{Table: d, Compute: func(ctx context.Context, ts MirrorTable) ([]exec.Change, error) {
		key := ts.RowKey(row)
		old, err := ts.Lookup(key)
		if err != nil {
			return nil, err
		}
		var out []exec.Change
		if old != nil {
			out = append(out, exec.Change{Row: old, Sign: exec.Delete})
		}
		return append(out, exec.Change{Row: row, Sign: exec.Insert}), nil
	}}, nil
}

// rowOp is one source change to one table: values come in the order of
// cols (the source's column names).
type rowOp struct {
	op       pgcdc.Op
	cols     []string
	new, old []pgcdc.Value
	// fill sets new's values in the row of new's key if the table holds
	// one, and does nothing otherwise (pgsource_fill.go).
	fill bool
}

// mirrorChanges computes the changes that bring a mirrored table from
// what it holds (ts) to what ops leave: each touched row once, as a
// deletion of what it held and an insertion of what it becomes. Applying
// ops again gives no change, so a transaction sent twice is harmless.
// With replace, ops are the whole table: rows they do not name go.
func mirrorChanges(ctx context.Context, ts MirrorTable, ops []rowOp, replace bool) ([]exec.Change, error) {
	type touched struct{ orig, final types.Row }
	state := map[string]*touched{}
	var order []string
	get := func(key []byte) (*touched, error) {
		if t, ok := state[string(key)]; ok {
			return t, nil
		}
		orig, err := ts.Lookup(key)
		if err != nil {
			return nil, err
		}
		t := &touched{orig: orig, final: orig}
		state[string(key)] = t
		order = append(order, string(key))
		return t, nil
	}
	clearAll := func() error {
		rows, err := ts.Rows(ctx)
		if err != nil {
			return err
		}
		for _, r := range rows {
			t, err := get(ts.RowKey(r))
			if err != nil {
				return err
			}
			t.final = nil
		}
		for _, t := range state {
			t.final = nil
		}
		return nil
	}
	if replace {
		if err := clearAll(); err != nil {
			return nil, err
		}
	}
	index := map[string]int{}
	for i, c := range ts.Columns() {
		index[c.Name] = i
	}
	build := func(vals []pgcdc.Value, names []string, prev types.Row) (types.Row, error) {
		row := make(types.Row, len(ts.Columns()))
		for i := range row {
			row[i] = types.Null
			if prev != nil {
				row[i] = prev[i]
			}
		}
		for j, v := range vals {
			i, ok := index[names[j]]
			if !ok || v.Unchanged {
				continue
			}
			d, err := sourceDatum(v.Text, v.Null, ts.Columns()[i])
			if err != nil {
				return nil, fmt.Errorf("table %s: %w", ts.Name(), err)
			}
			row[i] = d
		}
		return row, nil
	}
	for _, op := range ops {
		if op.fill {
			keyRow, err := build(op.new, op.cols, nil)
			if err != nil {
				return nil, err
			}
			t, err := get(ts.RowKey(keyRow))
			if err != nil {
				return nil, err
			}
			if t.final != nil {
				if t.final, err = build(op.new, op.cols, t.final); err != nil {
					return nil, err
				}
			}
			continue
		}
		switch op.op {
		case pgcdc.OpTruncate:
			if err := clearAll(); err != nil {
				return nil, err
			}
		case pgcdc.OpInsert, pgcdc.OpUpdate:
			var prev types.Row
			if op.old != nil {
				// The update changed the row's key: the old key goes.
				oldRow, err := build(op.old, op.cols, nil)
				if err != nil {
					return nil, err
				}
				t, err := get(ts.RowKey(oldRow))
				if err != nil {
					return nil, err
				}
				prev, t.final = t.final, nil
			}
			row, err := build(op.new, op.cols, nil)
			if err != nil {
				return nil, err
			}
			t, err := get(ts.RowKey(row))
			if err != nil {
				return nil, err
			}
			if prev == nil {
				prev = t.final
			}
			if prev != nil {
				// Values the source left out (unchanged TOAST) keep theirs.
				if row, err = build(op.new, op.cols, prev); err != nil {
					return nil, err
				}
			}
			t.final = row
		case pgcdc.OpDelete:
			keyRow, err := build(op.old, op.cols, nil)
			if err != nil {
				return nil, err
			}
			t, err := get(ts.RowKey(keyRow))
			if err != nil {
				return nil, err
			}
			t.final = nil
		}
	}
	var out []exec.Change
	for _, k := range order {
		t := state[k]
		if exec.SameRowValues(t.orig, t.final) {
			continue
		}
		if t.orig != nil {
			out = append(out, exec.Change{Row: t.orig, Sign: exec.Delete})
		}
		if t.final != nil {
			out = append(out, exec.Change{Row: t.final, Sign: exec.Insert})
		}
	}
	return out, nil
}
