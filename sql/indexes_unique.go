package sql

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/cockroachdb/pebble/v2"

	"streamdb/catalog"
	"streamdb/exec"
	"streamdb/sqlerr"
	"streamdb/storage"
	"streamdb/types"
)

// checkUniqueIndexes refuses changes to a table (in changelog order, on
// top of ts) that would leave two rows with equal values, none NULL, in
// the columns of one of its unique indexes: 23505, as PostgreSQL's unique
// index does. Within one statement deletions count first (the changelog's
// order), so an UPDATE that shifts values along passes.
func checkUniqueIndexes(d *catalog.Descriptor, ts *tableState, changes []exec.Change) error {
	for i := range d.Indexes {
		ix := &d.Indexes[i]
		if !ix.Unique {
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
			if anyNullAt(ch.Row, pos) {
				continue
			}
			vals := exec.AppendIndexValues(nil, ch.Row, pos)
			m, seen := holders[string(vals)]
			if !seen {
				var err error
				if m, err = ts.uniqueHolders(ix, pos, vals); err != nil {
					return err
				}
				holders[string(vals)] = m
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
					names, text := indexKeyText(ix, ts.cols, ch.Row)
					return &sqlerr.Error{Code: sqlerr.UniqueViolation, Message: fmt.Sprintf("duplicate key value violates unique constraint %q", ix.Name),
						Detail: fmt.Sprintf("Key (%s)=(%s) already exists.", names, text)}
				}
			}
			m[id]++
		}
	}
	return nil
}

func anyNullAt(row types.Row, cols []int) bool {
	for _, c := range cols {
		if row[c].IsNull() {
			return true
		}
	}
	return false
}

// uniqueHolders returns the rows of the table (snapshot and pending
// changes) whose columns pos of index ix encode to vals, by identity
// (rowKey) with their multiplicity.
func (ts *tableState) uniqueHolders(ix *catalog.Index, pos []int, vals []byte) (map[string]int, error) {
	m := map[string]int{}
	prefix := exec.IndexPrefix(ts.d.ID, ix)
	from := append(bytes.Clone(prefix), vals...)
	it, err := ts.snap.NewIter(&pebble.IterOptions{LowerBound: from, UpperBound: storage.PrefixEnd(from)})
	if err != nil {
		return nil, err
	}
	var ids []string
	for ok := it.First(); ok; ok = it.Next() {
		ids = append(ids, string(it.Key()[len(from):]))
	}
	err = it.Error()
	if cerr := it.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	matches := func(row types.Row) bool {
		return row != nil && bytes.Equal(exec.AppendIndexValues(nil, row, pos), vals)
	}
	if ts.key != nil {
		spilled, err := ts.spilledWith(pos, vals)
		if err != nil {
			return nil, err
		}
		ids = append(ids, spilled...)
		for _, ch := range ts.pendingChanges() {
			if matches(ch.Row) {
				ids = append(ids, string(rowKey(ts.key, ch.Row)))
			}
		}
		for _, id := range ids {
			row, err := ts.lookup([]byte(id))
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
	table := exec.ViewTablePrefix(ts.d.ID)
	for _, id := range ids {
		v, closer, err := ts.snap.Get(append(bytes.Clone(table), id...))
		if errors.Is(err, pebble.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		row, n, err := exec.DecodeViewValue(bytes.Clone(v), len(ts.cols))
		closer.Close()
		if err != nil {
			return nil, err
		}
		if matches(row) {
			m[id] = int(n)
		}
	}
	for _, ch := range ts.pendingChanges() {
		if matches(ch.Row) {
			id := string(rowKey(nil, ch.Row))
			m[id] = max(m[id]+int(ch.Sign), 0)
		}
	}
	return m, nil
}
