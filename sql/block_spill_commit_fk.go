package sql

import (
	"context"

	"streamdb/catalog"
	"streamdb/exec"
	"streamdb/meta"
	"streamdb/sqlerr"
	"streamdb/types"
)

// The COMMIT of a block checks its foreign keys again against the tables
// as they are now (enforceForeignKeys). When the block's changes to a
// linked table spilled, that check runs from the spill in bounded memory
// (checkBlockForeignKeys): each linked table is read as the COMMIT would
// leave it (commitState: the table now, then the block's own spilled
// changes, then those still in memory), and the block's changes are
// walked one row identity (a child's rows) or one referenced key (a
// parent's) at a time, looked up fkCheckBatch at a time. It finds what
// the check of all changes in memory (fkRun.run) finds: for each foreign
// key in turn, the row the block inserted first whose referenced key the
// parent does not hold (23503), then, for each in turn, the key it
// removed first that a row still references (23503). Referential actions
// are not run again: they ran at each statement.

// blockChanges is a block's own changes to one table at its COMMIT: the
// spilled ones (spill, read through its commitView; nil when none
// spilled), then tail, still in memory.
type blockChanges struct {
	d     *catalog.Descriptor
	key   []int
	spill *tableSpill
	tail  []exec.Change
	// tailSeq orders tail after the spill: its first change's seq.
	tailSeq uint64
}

func newBlockChanges(w *tableWrite) (*blockChanges, error) {
	cols, err := w.d.Schema()
	if err != nil {
		return nil, err
	}
	b := &blockChanges{d: w.d, tail: exec.ChangelogOrder(w.stmts)}
	if len(w.d.PrimaryKey) > 0 {
		b.key = pkIndexes(w.d, cols)
	}
	if w.spill != nil {
		b.spill, b.tailSeq = w.spill.commitView(), w.spill.end
	}
	return b, nil
}

// group hands fn, for each group of the changes by ident (nil to skip a
// change), the group's changes in order: first those whose spill holds
// them (spilled: the spill's own walk, in its order), then those only
// tail holds. The slice is reused after fn returns.
func (b *blockChanges) group(ident func(types.Row) ([]byte, bool), spilled func(fn func([]byte, []spillChange) error) error, fn func([]spillChange) error) error {
	tailOf := map[string][]spillChange{}
	var order []string
	for i, ch := range b.tail {
		k, ok := ident(ch.Row)
		if !ok {
			continue
		}
		if _, seen := tailOf[string(k)]; !seen {
			order = append(order, string(k))
		}
		tailOf[string(k)] = append(tailOf[string(k)], spillChange{seq: b.tailSeq + uint64(i), Change: ch})
	}
	if b.spill != nil {
		err := spilled(func(k []byte, chain []spillChange) error {
			if t, ok := tailOf[string(k)]; ok {
				chain = append(chain, t...)
				delete(tailOf, string(k))
			}
			return fn(chain)
		})
		if err != nil {
			return err
		}
	}
	for _, k := range order {
		if chain, ok := tailOf[k]; ok {
			if err := fn(chain); err != nil {
				return err
			}
		}
	}
	return nil
}

// eachIdentity hands fn the changes of each row identity (rowKey).
func (b *blockChanges) eachIdentity(fn func([]spillChange) error) error {
	ident := func(r types.Row) ([]byte, bool) { return rowKey(b.key, r), true }
	var spilled func(func([]byte, []spillChange) error) error
	if b.spill != nil {
		spilled = b.spill.eachIdentity
	}
	return b.group(ident, spilled, fn)
}

// eachValue hands fn the changes holding each value of columns cols
// (none NULL).
func (b *blockChanges) eachValue(cols []int, fn func([]spillChange) error) error {
	ident := func(r types.Row) ([]byte, bool) { return setValues(cols, r) }
	var spilled func(func([]byte, []spillChange) error) error
	if b.spill != nil {
		set := b.spill.setOf(cols)
		if set < 0 {
			return sqlerr.New(sqlerr.SerializationFailure, "table %q was altered while this commit ran", b.d.Name).
				WithHint("Retry the transaction.")
		}
		spilled = func(fn func([]byte, []spillChange) error) error { return b.spill.eachValue(set, fn) }
	}
	return b.group(ident, spilled, fn)
}

// netInsertions returns the rows a row identity's changes insert in all
// (netChanges' insertions), each as the change that first held it.
func netInsertions(chain []spillChange) []spillChange {
	count := map[string]int{}
	first := map[string]spillChange{}
	var order []string
	for _, ch := range chain {
		k := string(rowKey(nil, ch.Row)) // the whole row
		if _, ok := first[k]; !ok {
			order = append(order, k)
			first[k] = ch
		}
		count[k] += int(ch.Sign)
	}
	var out []spillChange
	for _, k := range order {
		for n := count[k]; n > 0; n-- {
			out = append(out, first[k])
		}
	}
	return out
}

// commitState opens table d as the block's COMMIT would leave it: the
// table now, then the block's own changes to it (b; nil for none).
// Holding d's log lock. Close it when done.
func (e *Engine) commitState(ctx context.Context, d *catalog.Descriptor, log *meta.TableLog, b *blockChanges) (*tableState, error) {
	if b != nil && b.spill != nil {
		// A state reads its spill between its snapshot and its pending
		// changes, so the snapshot must hold every commit before this
		// one (under the lock, none follows).
		if err := e.waitTableCurrent(ctx, d, "a commit"); err != nil {
			return nil, err
		}
	}
	ts, err := e.openTableState(d, log)
	if err != nil || b == nil {
		return ts, err
	}
	if b.spill != nil {
		if ts.HasPending() {
			ts.Close()
			return nil, sqlerr.New(sqlerr.SerializationFailure, "table %q changed while this commit ran", d.Name).
				WithHint("Retry the transaction.")
		}
		ts.setSpill(b.spill)
	}
	ts.AppendPending(b.tail)
	return ts, nil
}

// checkBlockForeignKeys is enforceForeignKeys for a block whose changes
// to a linked table spilled (see above). tables are every linked table,
// locked (logs).
func (s *session) checkBlockForeignKeys(ctx context.Context, tables []*tableWrite, logs []*meta.TableLog, links []fkLink) error {
	e := s.e
	blocks := map[uint32]*blockChanges{}
	logOf := map[uint32]*meta.TableLog{}
	for i, w := range tables {
		logOf[w.d.ID] = logs[i]
		if err := e.ensureCurrent(ctx, w.d, logs[i]); err != nil {
			return err
		}
		if w.spill == nil && len(w.stmts) == 0 {
			continue
		}
		b, err := newBlockChanges(w)
		if err != nil {
			return err
		}
		blocks[w.d.ID] = b
	}
	states := map[uint32]*tableState{}
	defer func() {
		for _, ts := range states {
			ts.Close()
		}
	}()
	f := &fkRun{s: s, links: links, check: true, descs: map[uint32]*catalog.Descriptor{},
		changes: map[uint32][]exec.Change{}, derived: map[uint32][]exec.Change{}}
	f.state = func(d *catalog.Descriptor) (*tableState, error) {
		if ts, ok := states[d.ID]; ok {
			return ts, nil
		}
		log, ok := logOf[d.ID]
		if !ok {
			return nil, sqlerr.New(sqlerr.SerializationFailure, "table %q was linked by a foreign key while this commit ran", d.Name).
				WithHint("Retry the transaction.")
		}
		ts, err := e.commitState(ctx, d, log, blocks[d.ID])
		if err == nil {
			states[d.ID] = ts
		}
		return ts, err
	}
	for _, l := range links {
		if b := blocks[l.child.ID]; b != nil {
			if err := f.checkInsertedReferences(ctx, l, b); err != nil {
				return err
			}
		}
	}
	for _, l := range links {
		if b := blocks[l.parent.ID]; b != nil {
			if err := f.checkRemovedKeys(ctx, l, b); err != nil {
				return err
			}
		}
	}
	return nil
}

// fkFound is a row or key a check looks up, with the seq of the change
// that first held it: the check reports the failure first held.
type fkFound struct {
	key string
	row types.Row
	seq uint64
}

// fkBatch gathers the keys a COMMIT checks against l's parent and looks
// them up fkCheckBatch at a time, so that memory stays bounded; check
// gets each batch with the keys the parent holds after the COMMIT.
type fkBatch struct {
	f     *fkRun
	l     fkLink
	found []fkFound
	check func(found []fkFound, held map[string]bool) error
}

// flushFull checks the batch once it holds fkCheckBatch keys.
func (b *fkBatch) flushFull(ctx context.Context) error {
	if len(b.found) < fkCheckBatch {
		return nil
	}
	return b.flush(ctx)
}

// flush checks what the batch holds and empties it.
func (b *fkBatch) flush(ctx context.Context) error {
	if len(b.found) == 0 {
		return nil
	}
	keys := make([]string, len(b.found))
	for i, x := range b.found {
		keys[i] = x.key
	}
	held, err := b.f.parentHolds(ctx, b.l, keys)
	if err != nil {
		return err
	}
	err = b.check(b.found, held)
	b.found = b.found[:0]
	return err
}

// checkInsertedReferences fails with 23503 for the row the block
// inserted into l's child first whose referenced key l's parent does not
// hold after the COMMIT.
func (f *fkRun) checkInsertedReferences(ctx context.Context, l fkLink, b *blockChanges) error {
	var failed *fkFound
	batch := fkBatch{f: f, l: l, check: func(found []fkFound, held map[string]bool) error {
		for _, x := range found {
			if !held[x.key] && (failed == nil || x.seq < failed.seq) {
				failed = &x
			}
		}
		return nil
	}}
	err := b.eachIdentity(func(chain []spillChange) error {
		for _, ins := range netInsertions(chain) {
			k, ok, err := fkKey(pick(ins.Row, l.ccols), l.ptypes)
			if err != nil {
				return err
			}
			if ok {
				batch.found = append(batch.found, fkFound{key: k, row: ins.Row, seq: ins.seq})
			}
		}
		return batch.flushFull(ctx)
	})
	if err == nil {
		err = batch.flush(ctx)
	}
	if err == nil && failed != nil {
		err = fkMissing(l, failed.row)
	}
	return err
}

// checkRemovedKeys fails with 23503 for the referenced key of l the
// block removed from l's parent first (its changes take it away, and no
// row holds it after the COMMIT) that a row of l's child still
// references after the COMMIT.
func (f *fkRun) checkRemovedKeys(ctx context.Context, l fkLink, b *blockChanges) error {
	var failed *fkFound
	batch := fkBatch{f: f, l: l, check: func(found []fkFound, held map[string]bool) error {
		gone := map[string]types.Row{}
		seqOf := map[string]uint64{}
		for _, x := range found {
			if !held[x.key] {
				gone[x.key], seqOf[x.key] = nil, x.seq
			}
		}
		if len(gone) == 0 {
			return nil
		}
		rows, err := f.childRows(ctx, l, gone)
		if err != nil {
			return err
		}
		for _, r := range rows {
			k, ok, err := fkKey(pick(r, l.ccols), l.ptypes)
			if err != nil {
				return err
			}
			if _, removed := gone[k]; ok && removed && (failed == nil || seqOf[k] < failed.seq) {
				failed = &fkFound{key: k, row: r, seq: seqOf[k]}
			}
		}
		return nil
	}}
	byKey := func(chain []spillChange) error {
		k, ok, err := fkKey(pick(chain[0].Row, l.pcols), l.ptypes)
		if err != nil || !ok {
			return err
		}
		delta := 0
		for _, ch := range chain {
			delta += int(ch.Sign)
		}
		if delta < 0 {
			batch.found = append(batch.found, fkFound{key: k, seq: chain[0].seq})
		}
		return batch.flushFull(ctx)
	}
	var err error
	if l.pkOrder != nil {
		// The referenced key is the primary key: a row identity.
		err = b.eachIdentity(byKey)
	} else {
		err = b.eachValue(l.pcols, byKey)
	}
	if err == nil {
		err = batch.flush(ctx)
	}
	if err == nil && failed != nil {
		err = fkReferenced(l, failed.row)
	}
	return err
}
