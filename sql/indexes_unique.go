package sql

import (
	"bytes"
	"fmt"

	"streamdb/catalog"
	"streamdb/exec"
	"streamdb/meta"
	"streamdb/sqlerr"
	"streamdb/types"
)

// checkUniqueIndexes refuses changes to a table (in changelog order, on
// top of ts) that would leave two rows with equal values, none NULL, in
// the columns of one of its unique indexes (CREATE UNIQUE INDEX): 23505,
// as PostgreSQL's unique index does. Within one statement deletions count
// first (the changelog's order), so an UPDATE that shifts values along
// passes. The indexes of UNIQUE constraints are checkUniqueConstraints'.
func checkUniqueIndexes(d *catalog.Descriptor, ts *tableState, changes []exec.Change) error {
	for i := range d.Indexes {
		ix := &d.Indexes[i]
		if !ix.Unique || ix.Constraint {
			continue
		}
		pos, ok := exec.IndexColumns(ix, ts.cols)
		if !ok {
			continue
		}
		// holders: for each indexed value seen, the rows that have it
		// now (by identity, with multiplicity).
		holders := map[string]map[string]int{}
		for _, ch := range changes {
			if meta.AnyNullAt(ch.Row, pos) {
				continue
			}
			m, err := holdersOf(ts, ix, pos, exec.AppendIndexValues(nil, ch.Row, pos), holders)
			if err != nil {
				return err
			}
			id := string(rowKey(ts.key, ch.Row))
			if ch.Sign < 0 {
				if m[id] > 0 {
					m[id]--
				}
				continue
			}
			for _, n := range m {
				if n > 0 {
					return uniqueIndexViolation(ix, ts.cols, ch.Row)
				}
			}
			m[id]++
		}
	}
	return nil
}

// checkUniqueConstraints fails with 23505 if, with base and then changes
// applied to the rows of ts, a value that changes insert in the columns
// of one of the table's UNIQUE constraints (none NULL) is held by more
// than one row: the constraint is checked on what the changes do as a
// whole, as PostgreSQL checks a deferred one. base are changes already
// made on top of ts that it does not hold (a transaction's earlier
// statements, when ts is the table as it is now). The rows holding a
// value are read from the constraint's index, for the values changes
// insert only.
//
// deferred, when not nil, tells the constraints a transaction's
// statement leaves to its COMMIT.
func checkUniqueConstraints(d *catalog.Descriptor, ts *tableState, base, changes []exec.Change, deferred func(catalog.Constraint) bool) error {
	for i := range d.Indexes {
		ix := &d.Indexes[i]
		c := constraintOf(d, ix)
		if c == nil || (deferred != nil && deferred(*c)) {
			continue
		}
		pos, ok := exec.IndexColumns(ix, ts.cols)
		if !ok {
			continue
		}
		inserted := map[string]bool{}
		for _, ch := range changes {
			if ch.Sign > 0 && !meta.AnyNullAt(ch.Row, pos) {
				inserted[string(exec.AppendIndexValues(nil, ch.Row, pos))] = true
			}
		}
		if len(inserted) == 0 {
			continue
		}
		holders := map[string]map[string]int{}
		for _, chs := range [][]exec.Change{base, changes} {
			for _, ch := range chs {
				if meta.AnyNullAt(ch.Row, pos) {
					continue
				}
				vals := exec.AppendIndexValues(nil, ch.Row, pos)
				if !inserted[string(vals)] {
					continue
				}
				m, err := holdersOf(ts, ix, pos, vals, holders)
				if err != nil {
					return err
				}
				id := string(rowKey(ts.key, ch.Row))
				m[id] = max(m[id]+int(ch.Sign), 0)
			}
		}
		for _, ch := range changes {
			if ch.Sign < 0 || meta.AnyNullAt(ch.Row, pos) {
				continue
			}
			n := 0
			for _, k := range holders[string(exec.AppendIndexValues(nil, ch.Row, pos))] {
				n += k
			}
			if n > 1 {
				return uniqueIndexViolation(ix, ts.cols, ch.Row)
			}
		}
	}
	return nil
}

// holdersOf returns, from holders or else read from ts, the rows holding
// values vals in index ix (columns pos), by identity.
func holdersOf(ts *tableState, ix *catalog.Index, pos []int, vals []byte, holders map[string]map[string]int) (map[string]int, error) {
	if m, seen := holders[string(vals)]; seen {
		return m, nil
	}
	m, err := ts.uniqueHolders(ix, pos, vals)
	if err != nil {
		return nil, err
	}
	holders[string(vals)] = m
	return m, nil
}

// uniqueIndexViolation is PostgreSQL's 23505 for row on unique index ix
// (named as its constraint is).
func uniqueIndexViolation(ix *catalog.Index, cols []types.Column, row types.Row) error {
	names, text := indexKeyText(ix, cols, row)
	return &sqlerr.Error{Code: sqlerr.UniqueViolation, Message: fmt.Sprintf("duplicate key value violates unique constraint %q", ix.Name),
		Detail: fmt.Sprintf("Key (%s)=(%s) already exists.", names, text)}
}

// uniqueHolders returns the rows of the table (snapshot and pending
// changes) whose columns pos of index ix encode to vals, by identity
// (rowKey) with their multiplicity.
func (ts *tableState) uniqueHolders(ix *catalog.Index, pos []int, vals []byte) (map[string]int, error) {
	m := map[string]int{}
	prefix := exec.IndexPrefix(ts.d.ID, ix)
	from := append(bytes.Clone(prefix), vals...)
	var ids []string
	err := ts.EachStoredKey(from, func(key []byte) error {
		ids = append(ids, string(key[len(from):]))
		return nil
	})
	if err != nil {
		return nil, err
	}
	var buf []byte
	matches := func(row types.Row) bool {
		if row == nil {
			return false
		}
		buf = exec.AppendIndexValues(buf[:0], row, pos)
		return bytes.Equal(buf, vals)
	}
	pending := ts.PendingWithValues(pos, vals)
	if ts.key != nil {
		spilled, err := ts.spilledWith(pos, vals)
		if err != nil {
			return nil, err
		}
		ids = append(ids, spilled...)
		for _, ch := range pending {
			ids = append(ids, string(rowKey(ts.key, ch.Row)))
		}
		for _, id := range ids {
			row, err := ts.Lookup([]byte(id))
			if err != nil {
				return nil, err
			}
			if matches(row) {
				m[id] = 1
			}
		}
		return m, nil
	}
	// A table without a primary key stores each distinct row once with
	// its count; its pending changes add and take away copies.
	for _, id := range ids {
		row, n, ok, err := ts.StoredRow([]byte(id))
		if err != nil {
			return nil, err
		}
		if ok && matches(row) {
			m[id] = int(n)
		}
	}
	if err := ts.spilledHolders(pos, vals, m); err != nil {
		return nil, err
	}
	for _, ch := range pending {
		id := string(rowKey(nil, ch.Row))
		m[id] = max(m[id]+int(ch.Sign), 0)
	}
	return m, nil
}
