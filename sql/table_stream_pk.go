package sql

import (
	"bytes"
	"context"
	"fmt"

	"streamdb/catalog"
	"streamdb/exec"
	"streamdb/expr"
	"streamdb/sqlerr"
	"streamdb/types"
)

// A streaming UPDATE that assigns a primary key column (or changes a
// generated one) moves rows to new keys. It reads the table from the
// statement's snapshot (the table before it: nothing it publishes is
// applied before its commit), so each row is updated once even when its
// new key sorts after the scan's position.
//
// The primary key is checked as the table's UNIQUE keys are
// (table_stream_unique.go): on what the statement does as a whole, at its
// end. A key is taken at the end by its holder in the table before the
// statement unless the statement moved the holder off it, and by every
// row the statement moved onto it. streamPK keeps three key sets: keys
// rows moved onto (a second move onto one is a violation at once), keys
// rows moved off, and keys moved onto while their holder, not seen yet,
// still had them (pending); at the end every pending key must have been
// let go.
//
// The table's pipeline applies a commit's changes in order, a deletion
// removing whatever its key holds. So an insertion onto a key must not
// be published before the deletion of the key's old holder: a row moved
// onto a pending key is held back (changeHold, on disk past a bound)
// and published after every deletion of the statement. A row moved onto
// a key that is free, or that its holder already let go (its deletion
// published in an earlier batch, or earlier in the same batch, whose
// deletions go first), is published with its batch.

// streamPK checks the primary key of one streaming UPDATE.
type streamPK struct {
	ts *tableState
	// refuse, when not nil, fails a row that moves to a new key: the
	// table's foreign keys, as they are once the statement runs, do not
	// let it stream (keyMovesStream).
	refuse   error
	sets     keySets // streamMovedOnto, streamLetGo, streamPending
	pending  int     // keys made pending
	resolved int     // pending keys let go later
	// holdBack marks, by position in the batch checked last, the
	// insertions to publish after every deletion.
	holdBack  []bool
	held      *changeHold
	openStore func() (scratchStore, error)
	okey      []byte
	nkey      []byte
}

// changesPrimaryKey reports whether an UPDATE of table d with
// assignments sets (nil: column unchanged) may change a row's primary
// key: it assigns a key column, or a key column is generated.
func changesPrimaryKey(d *catalog.Descriptor, sets []expr.Expr) bool {
	for _, name := range d.PrimaryKey {
		for i, c := range d.Columns {
			if c.Name == name && (c.Generated != "" || i < len(sets) && sets[i] != nil) {
				return true
			}
		}
	}
	return false
}

// keyMovesStream reports whether an UPDATE that moves primary keys of
// table d (as the catalog has it) streams: d does not reference itself,
// and the foreign keys into it have no ON UPDATE action (streamFKMoves
// checks them over the whole statement).
func keyMovesStream(e *Engine, d *catalog.Descriptor) bool {
	p, ok := e.streamFKPlanWith(d, true)
	return ok && p.self == nil && referencedMovesStream(p.links, d)
}

// referencedMovesStream reports whether an UPDATE that moves values of
// table d the foreign keys of links reference streams: none of those
// into d has an ON UPDATE action.
func referencedMovesStream(links []fkLink, d *catalog.Descriptor) bool {
	for _, l := range links {
		if l.parent.ID == d.ID && !fkRestricts(l.con.OnUpdate) {
			return false
		}
	}
	return true
}

// newStreamPK returns the check of table ts's primary key, or nil when it
// has none; refuse is streamPK's. open makes its key sets; openStore the
// store of held rows, once they outgrow memory.
func newStreamPK(ts *tableState, refuse error, open func(n int) keySets, openStore func() (scratchStore, error)) *streamPK {
	if len(ts.key) == 0 {
		return nil
	}
	return &streamPK{ts: ts, refuse: refuse, sets: open(streamSetsPerKey), openStore: openStore}
}

func (p *streamPK) close() {
	p.sets.Close()
	if p.held != nil {
		p.held.close()
	}
}

// batch checks a batch of a streaming change in order (an UPDATE's rows
// as a deletion followed by an insertion, a DELETE's as lone deletions)
// and marks the insertions to hold back.
func (p *streamPK) batch(changes []exec.Change) error {
	p.holdBack = append(p.holdBack[:0], make([]bool, len(changes))...)
	for j := 0; j < len(changes); j++ {
		if changes[j].Sign > 0 || j+1 == len(changes) || changes[j+1].Sign < 0 {
			continue // a lone deletion frees a key no row of a DELETE takes
		}
		old, next := changes[j].Row, changes[j+1].Row
		j++
		p.okey = appendPrimaryKey(p.okey[:0], p.ts.key, old)
		p.nkey = appendPrimaryKey(p.nkey[:0], p.ts.key, next)
		if bytes.Equal(p.okey, p.nkey) {
			continue
		}
		if p.refuse != nil {
			return p.refuse
		}
		if err := p.letGo(p.okey); err != nil {
			return err
		}
		hold, err := p.moveOnto(next)
		if err != nil {
			return err
		}
		p.holdBack[j] = hold
	}
	return nil
}

// letGo notes that the row holding key moved off it.
func (p *streamPK) letGo(key []byte) error {
	pending, err := p.sets.Has(streamPending, key)
	if err != nil {
		return err
	}
	if pending {
		p.resolved++
	}
	return p.sets.Add(streamLetGo, key)
}

// moveOnto notes that a row moves onto next's key (p.nkey), which it
// did not have; hold tells that the key's holder has not let it go yet.
func (p *streamPK) moveOnto(next types.Row) (hold bool, err error) {
	key := p.nkey
	taken, err := p.sets.Has(streamMovedOnto, key)
	if err != nil {
		return false, err
	}
	if taken {
		return false, duplicateKey(p.ts.d, p.ts.cols, p.ts.key, next)
	}
	if err := p.sets.Add(streamMovedOnto, key); err != nil {
		return false, err
	}
	free, err := p.sets.Has(streamLetGo, key)
	if err != nil || free {
		return false, err
	}
	held, err := p.ts.KeyTaken(key)
	if err != nil || !held {
		return false, err
	}
	p.pending++
	return true, p.sets.Add(streamPending, key)
}

// split moves the insertions of batch (the one checked last) that are
// held back into the hold, and returns the rest, in order, in batch's
// array.
func (p *streamPK) split(batch []exec.Change) ([]exec.Change, error) {
	out := batch[:0]
	for i, ch := range batch {
		if i >= len(p.holdBack) || !p.holdBack[i] {
			out = append(out, ch)
			continue
		}
		if p.held == nil {
			p.held = newChangeHold(len(p.ts.cols), p.openStore)
		}
		if err := p.held.add(ch.Row); err != nil {
			return nil, err
		}
	}
	clear(p.holdBack)
	return out, nil
}

// publishHeld hands the held insertions to publish a batch at a time, in
// the order they were held.
func (p *streamPK) publishHeld(publish func([]exec.Change) error) error {
	if p.held == nil {
		return nil
	}
	return p.held.each(changeBatchRows, publish)
}

// finish checks, once every row has been seen, that each key moved onto
// was let go by its holder; rows hands the table's rows again to find a
// holder that kept one, for the error's detail.
func (p *streamPK) finish(ctx context.Context, rows func(context.Context, func(types.Row) error) error) error {
	if p.pending == p.resolved {
		return nil
	}
	var found error
	err := rows(ctx, func(row types.Row) error {
		if found != nil {
			return nil
		}
		p.okey = appendPrimaryKey(p.okey[:0], p.ts.key, row)
		pending, err := p.sets.Has(streamPending, p.okey)
		if err != nil || !pending {
			return err
		}
		let, err := p.sets.Has(streamLetGo, p.okey)
		if err == nil && !let {
			found = duplicateKey(p.ts.d, p.ts.cols, p.ts.key, row)
		}
		return err
	})
	if err != nil {
		return err
	}
	if found != nil {
		return found
	}
	return &sqlerr.Error{Code: sqlerr.UniqueViolation, Message: fmt.Sprintf("duplicate key value violates unique constraint %q", catalog.PrimaryKeyName(p.ts.d.Name))}
}

// checkInsertedNotNull enforces NOT NULL on the rows changes insert.
func checkInsertedNotNull(d *catalog.Descriptor, cols []types.Column, changes []exec.Change) error {
	for _, ch := range changes {
		if ch.Sign > 0 {
			if err := checkNotNull(d, cols, ch.Row); err != nil {
				return err
			}
		}
	}
	return nil
}

// appendPrimaryKey appends row's primary key (columns key) to buf in the
// state table's key encoding, as rowKey encodes it.
func appendPrimaryKey(buf []byte, key []int, row types.Row) []byte {
	for _, k := range key {
		buf = exec.AppendKey(buf, row[k])
	}
	return buf
}
