package sql

import (
	"bytes"
	"context"
	"fmt"
	"slices"

	"streamdb/catalog"
	"streamdb/exec"
	"streamdb/meta"
	"streamdb/sqlerr"
	"streamdb/types"
)

// A streaming UPDATE or DELETE of a table with UNIQUE constraints or
// unique indexes checks them as the rows come, on what the statement does as a
// whole, as the general path does (checkUniqueConstraints): a value is
// taken at the end of the statement by its holder in the table before
// it, unless the statement moved the holder off it, and by every row the
// statement moved onto it. So UPDATE t SET u = u + 1 passes whatever
// order the rows come in.
//
// The table's log lock is held throughout (streamingWrite), so the table
// as read (ts) is the table before the statement, and a value has at
// most one holder in it: one row, named by its primary key before the
// statement, or in a table without one by its whole row (which a table
// holds once when it holds a value of a unique key). For each unique key the statement remembers,
// in storage.KeySets (which move to disk past a bound, so memory does
// not grow with the rows): the values it moved rows onto (a second is a
// violation at once), the values it moved rows off (their holder let them
// go), and the values it moved a row onto while their holder, not yet
// seen, still had them (pending). A holder seen later that lets its
// value go resolves that value; at the end every pending value must be
// resolved. The values are told apart by count, since a value is pending
// at most once and let go at most once; when the counts differ a second
// pass over the table finds a holder that kept a pending value, for the
// error's detail.

// streamUnique checks the unique keys of one streaming UPDATE or DELETE.
type streamUnique struct {
	ts       *tableState
	keys     []streamUniqueKey
	sets     keySets // three per key: streamMovedOnto, streamLetGo, streamPending
	ovals    []byte
	nvals    []byte
	pending  []int // per key: values made pending
	resolved []int // per key: pending values let go later
}

// streamUniqueKey is one unique index of the table (a UNIQUE
// constraint's or one of its own) and its columns.
type streamUniqueKey struct {
	ix  *catalog.Index
	pos []int
}

// The sets of a key, at 3*key plus these.
const (
	streamMovedOnto = iota
	streamLetGo
	streamPending
	streamSetsPerKey
)

// newStreamUnique returns the check of table ts.d's unique indexes (d as
// the catalog has it: cur), or nil when it has none. open makes the key
// sets.
func newStreamUnique(cur *catalog.Descriptor, ts *tableState, open func(n int) keySets) *streamUnique {
	u := &streamUnique{ts: ts}
	for i := range cur.Indexes {
		ix := &cur.Indexes[i]
		if !ix.Unique {
			continue
		}
		pos, ok := exec.IndexColumns(ix, ts.cols)
		if !ok {
			continue
		}
		u.keys = append(u.keys, streamUniqueKey{ix: ix, pos: pos})
	}
	if len(u.keys) == 0 {
		return nil
	}
	u.sets = open(streamSetsPerKey * len(u.keys))
	u.pending = make([]int, len(u.keys))
	u.resolved = make([]int, len(u.keys))
	return u
}

func (u *streamUnique) close() { u.sets.Close() }

// batch checks a batch of a streaming change in order: an UPDATE's rows
// as a deletion followed by the insertion of the same key, a DELETE's as
// lone deletions.
func (u *streamUnique) batch(changes []exec.Change) error {
	// A batch without an insertion is a DELETE's (an UPDATE's batches
	// hold each row's insertion): a DELETE takes no value, so no later
	// batch of it moves onto the values it frees and it has nothing to
	// check.
	if !slices.ContainsFunc(changes, func(ch exec.Change) bool { return ch.Sign > 0 }) {
		return nil
	}
	for j := 0; j < len(changes); j++ {
		old, next := changes[j].Row, types.Row(nil)
		if j+1 < len(changes) && changes[j+1].Sign > 0 {
			next = changes[j+1].Row
			j++
		}
		if err := u.row(old, next); err != nil {
			return err
		}
	}
	return nil
}

// row checks one row the statement changes from old to next (nil: the
// row is deleted).
func (u *streamUnique) row(old, next types.Row) error {
	for i := range u.keys {
		k := &u.keys[i]
		oOK := !meta.AnyNullAt(old, k.pos)
		nOK := next != nil && !meta.AnyNullAt(next, k.pos)
		if oOK {
			u.ovals = exec.AppendIndexValues(u.ovals[:0], old, k.pos)
		}
		if nOK {
			u.nvals = exec.AppendIndexValues(u.nvals[:0], next, k.pos)
		}
		if oOK && nOK && bytes.Equal(u.ovals, u.nvals) {
			continue // the row keeps its value
		}
		if oOK {
			if err := u.letGo(i, u.ovals); err != nil {
				return err
			}
		}
		if nOK {
			if err := u.moveOnto(i, old, next); err != nil {
				return err
			}
		}
	}
	return nil
}

// letGo notes that the holder of value vals of key i moved off it.
func (u *streamUnique) letGo(i int, vals []byte) error {
	set := streamSetsPerKey * i
	pending, err := u.sets.Has(set+streamPending, vals)
	if err != nil {
		return err
	}
	if pending {
		u.resolved[i]++
	}
	return u.sets.Add(set+streamLetGo, vals)
}

// moveOnto notes that row old becomes next, whose value of key i
// (u.nvals) it did not have.
func (u *streamUnique) moveOnto(i int, old, next types.Row) error {
	set, k := streamSetsPerKey*i, &u.keys[i]
	vals := u.nvals
	taken, err := u.sets.Has(set+streamMovedOnto, vals)
	if err != nil {
		return err
	}
	if taken {
		return uniqueIndexViolation(k.ix, u.ts.cols, next)
	}
	if err := u.sets.Add(set+streamMovedOnto, vals); err != nil {
		return err
	}
	free, err := u.sets.Has(set+streamLetGo, vals)
	if err != nil || free {
		return err
	}
	holders, err := u.ts.uniqueHolders(k.ix, k.pos, vals)
	if err != nil {
		return err
	}
	self := string(rowKey(u.ts.key, old))
	for id, n := range holders {
		if n > 0 && id != self {
			u.pending[i]++
			return u.sets.Add(set+streamPending, vals)
		}
	}
	return nil
}

// finish checks, once every row has been seen, that each value moved
// onto was let go by its holder; rows hands the table's rows again (as
// in the first pass) to find the holder that kept one.
func (u *streamUnique) finish(ctx context.Context, rows func(context.Context, func(types.Row) error) error) error {
	for i := range u.keys {
		if u.pending[i] == u.resolved[i] {
			continue
		}
		k, set := &u.keys[i], streamSetsPerKey*i
		var found error
		err := rows(ctx, func(row types.Row) error {
			if found != nil || meta.AnyNullAt(row, k.pos) {
				return nil
			}
			u.ovals = exec.AppendIndexValues(u.ovals[:0], row, k.pos)
			pending, err := u.sets.Has(set+streamPending, u.ovals)
			if err != nil || !pending {
				return err
			}
			let, err := u.sets.Has(set+streamLetGo, u.ovals)
			if err == nil && !let {
				found = uniqueIndexViolation(k.ix, u.ts.cols, row)
			}
			return err
		})
		if err != nil {
			return err
		}
		if found != nil {
			return found
		}
		return &sqlerr.Error{Code: sqlerr.UniqueViolation, Message: fmt.Sprintf("duplicate key value violates unique constraint %q", k.ix.Name)}
	}
	return nil
}
