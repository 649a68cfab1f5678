package sql

import (
	"context"
	"sort"

	"streamdb/catalog"
	"streamdb/exec"
	"streamdb/types"
)

// A streaming UPDATE or DELETE of a table that references itself (NO
// ACTION or RESTRICT: employees.manager_id → employees.id) is checked
// over the whole statement, as PostgreSQL checks it after the statement's
// last row: deleting a subtree in any order passes, deleting a row whose
// referencing row stays fails with 23503.
//
// The statement keeps every primary key, so an UPDATE removes no key and
// its rows find their referenced keys in the table as it was (fkRun's
// check of the batch). A DELETE removes the keys of the rows it deletes.
// For each batch the rows referencing them are read from the table as it
// was (by an index on the referencing columns, or streamed); each must be
// deleted by the statement too, in this batch, an earlier one or a later
// one. Two key sets (storage.KeySets, which move to disk past a bound)
// hold the rows deleted and the rows that must be (pending: referencing a
// deleted key while not yet deleted). A pending row is added once and
// resolved at most once, so the statement passes when every pending row
// was resolved; otherwise a second pass over the table finds a row left
// referencing a deleted key, for the error.

const (
	selfDeleted = iota
	selfPending
	selfSets
)

// streamFKSelf checks one table's reference to itself over a statement.
type streamFKSelf struct {
	d                 *catalog.Descriptor
	l                 fkLink
	ts                *tableState // the table before the statement
	sets              keySets
	pending, resolved int
}

func newStreamFKSelf(d *catalog.Descriptor, l fkLink, ts *tableState, open func(n int) keySets) *streamFKSelf {
	return &streamFKSelf{d: d, l: l, ts: ts, sets: open(selfSets)}
}

func (c *streamFKSelf) close() { c.sets.Close() }

// batch checks a batch of the statement's changes (r's, the batch's):
// the rows it writes find their keys, and the rows referencing the keys
// it deletes are noted.
func (c *streamFKSelf) batch(ctx context.Context, r *fkRun, changes []exec.Change) error {
	l, ts := c.l, c.ts
	// The rows deleted: a deletion not followed by its row's insertion
	// (an UPDATE's pair).
	var keys map[string]bool
	var inserted []string
	var rows []types.Row
	for i := 0; i < len(changes); i++ {
		ch := changes[i]
		if ch.Sign > 0 {
			k, ok, err := fkKey(pick(ch.Row, l.ccols), l.ptypes)
			if err != nil {
				return err
			}
			if ok {
				inserted, rows = append(inserted, k), append(rows, ch.Row)
			}
			continue
		}
		if i+1 < len(changes) && changes[i+1].Sign > 0 {
			continue
		}
		id := rowKey(ts.key, ch.Row)
		if err := c.sets.Add(selfDeleted, id); err != nil {
			return err
		}
		was, err := c.sets.Has(selfPending, id)
		if err != nil {
			return err
		}
		if was {
			c.resolved++
		}
		k, ok, err := fkKey(pick(ch.Row, l.pcols), l.ptypes)
		if err != nil {
			return err
		}
		if ok {
			if keys == nil {
				keys = map[string]bool{}
			}
			keys[k] = true
		}
	}
	if err := r.checkReferences(ctx, l, inserted, rows); err != nil {
		return err
	}
	if len(keys) == 0 {
		return nil
	}
	matches := func(row types.Row) (bool, error) {
		k, ok, err := fkKey(pick(row, l.ccols), l.ptypes)
		return ok && keys[k], err
	}
	refs, err := ts.rowsWithValues(ctx, c.d.Indexes, l.ccols, l.ptypes, keys, matches)
	if err != nil {
		return err
	}
	for _, row := range refs {
		id := rowKey(ts.key, row)
		gone, err := c.sets.Has(selfDeleted, id)
		if err != nil {
			return err
		}
		was, err := c.sets.Has(selfPending, id)
		if err != nil {
			return err
		}
		if !gone && !was {
			if err := c.sets.Add(selfPending, id); err != nil {
				return err
			}
			c.pending++
		}
	}
	return nil
}

// finish fails with 23503 when a row the statement kept references a key
// it deleted.
func (c *streamFKSelf) finish(ctx context.Context) error {
	if c.pending == c.resolved {
		return nil
	}
	l, ts := c.l, c.ts
	var found types.Row
	err := ts.EachRow(ctx, func(row types.Row) error {
		if found != nil {
			return nil
		}
		if gone, err := c.sets.Has(selfDeleted, rowKey(ts.key, row)); err != nil || gone {
			return err
		}
		k, ok, err := fkKey(pick(row, l.ccols), l.ptypes)
		if err != nil || !ok {
			return err
		}
		pk := k
		if !sort.IntsAreSorted(l.pkOrder) {
			if pk, err = reorderKey(k, l.pkOrder); err != nil {
				return err
			}
		}
		gone, err := c.sets.Has(selfDeleted, []byte(pk))
		if err == nil && gone {
			found = row
		}
		return err
	})
	if err != nil {
		return err
	}
	if found == nil {
		return nil // cannot happen: the counts tell
	}
	return fkReferenced(l, found)
}
