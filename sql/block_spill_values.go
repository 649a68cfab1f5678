package sql

import (
	"bytes"
	"encoding/binary"
	"slices"

	"streamdb/catalog"
	"streamdb/exec"
	"streamdb/meta"
	"streamdb/types"
)

// A spilled table whose rows are checked by value (a unique index, a
// UNIQUE constraint, a foreign key at either end) keeps its spilled
// changes a third time, by the values of each column set those checks
// look rows up by (spillValueSets), in changelog order:
//
//	'V' table set values seq -> sign, row
//
// set numbers the column set (tableSpill.sets), values are the row's
// values of it in key encoding (keyenc, as index entries and unique keys
// encode them). A change whose values hold a NULL is not kept there:
// NULLs match nothing. So the block finds its own rows holding a value
// by key, without a scan of what it spilled, both while it runs (a
// statement's 23505 and foreign key checks, tableState) and at COMMIT,
// which checks one value's changes at a time (block_spill_commit_keys.go).

// spillValueSets returns the column sets table d's rows are looked up
// by (see above), each once, as column positions in cols.
func (e *Engine) spillValueSets(d *catalog.Descriptor, cols []types.Column) [][]int {
	var sets [][]int
	add := func(set []int) {
		if !slices.Contains(set, -1) && !slices.ContainsFunc(sets, func(s []int) bool { return slices.Equal(s, set) }) {
			sets = append(sets, set)
		}
	}
	byName := func(names []string) []int {
		out := make([]int, len(names))
		for i, n := range names {
			out[i] = columnIndex(cols, n)
		}
		return out
	}
	for i := range d.Indexes {
		ix := &d.Indexes[i]
		if !ix.Unique {
			continue
		}
		if pos, ok := exec.IndexColumns(ix, cols); ok {
			add(pos)
		}
	}
	for _, c := range d.Constraints {
		if c.Type == "u" || c.Type == "f" {
			add(byName(c.Columns))
		}
	}
	links, _ := e.fkLinked([]*catalog.Descriptor{d})
	for _, l := range links {
		if l.parent.ID == d.ID && l.pkOrder == nil {
			add(l.pcols)
		}
	}
	return sets
}

// setOf returns the number of the column set cols (in that order), or
// -1 when the spill does not keep its changes by those values.
func (ts *tableSpill) setOf(cols []int) int {
	return slices.IndexFunc(ts.sets, func(s []int) bool { return slices.Equal(s, cols) })
}

func spillValuePrefix(id uint32, set int, vals []byte) []byte {
	k := binary.BigEndian.AppendUint32([]byte{'V'}, id)
	k = binary.BigEndian.AppendUint16(k, uint16(set))
	return append(k, vals...)
}

// valueKeys returns the 'V' keys of a change of row at seq.
func (ts *tableSpill) valueKeys(row types.Row, seq uint64) [][]byte {
	var out [][]byte
	for i, set := range ts.sets {
		vals, ok := setValues(set, row)
		if ok {
			out = append(out, binary.BigEndian.AppendUint64(spillValuePrefix(ts.id, i, vals), seq))
		}
	}
	return out
}

// setValues encodes row's values of the columns set; ok is false when
// one is NULL.
func setValues(set []int, row types.Row) ([]byte, bool) {
	if meta.AnyNullAt(row, set) {
		return nil, false
	}
	return exec.AppendIndexValues(nil, row, set), true
}

// withValues hands fn, in changelog order, the spilled changes whose
// values of column set number set encode to vals: all of them, or only
// the block's own (from ts.own on).
func (ts *tableSpill) withValues(set int, vals []byte, ownOnly bool, fn func(seq uint64, ch exec.Change) error) error {
	p := spillValuePrefix(ts.id, set, vals)
	return ts.s.db.Scan(p, prefixEnd(p), false, func(k, v []byte) (bool, error) {
		if len(k) != len(p)+8 {
			// A longer value that starts with vals: keyenc values are
			// self-delimiting, so it is another value.
			return true, nil
		}
		seq := binary.BigEndian.Uint64(k[len(p):])
		if !ts.sees(seq) || ownOnly && seq < ts.own {
			return true, nil
		}
		ch, err := ts.decode(v)
		if err == nil {
			err = fn(seq, ch)
		}
		return err == nil, err
	})
}

// identitiesWith returns the identities (rowKey) of the rows the spill
// changed to or from the values vals of column set cols; ok is false
// when the spill does not keep that set.
func (ts *tableSpill) identitiesWith(key, cols []int, vals []byte) (ids []string, ok bool, err error) {
	set := ts.setOf(cols)
	if set < 0 {
		return nil, false, nil
	}
	err = ts.withValues(set, vals, false, func(_ uint64, ch exec.Change) error {
		id := string(rowKey(key, ch.Row))
		if !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
		return nil
	})
	return ids, true, err
}

// eachValue hands fn each value of column set number set the block's
// own spilled changes hold, in key order, with those changes in
// changelog order (the slice is reused after fn returns).
func (ts *tableSpill) eachValue(set int, fn func(vals []byte, chain []spillChange) error) error {
	p := spillValuePrefix(ts.id, set, nil)
	var cur []byte
	var chain []spillChange
	err := ts.s.db.Scan(p, prefixEnd(p), false, func(k, v []byte) (bool, error) {
		seq := binary.BigEndian.Uint64(k[len(k)-8:])
		if seq < ts.own {
			return true, nil
		}
		vals := k[len(p) : len(k)-8]
		if len(chain) > 0 && !bytes.Equal(vals, cur) {
			if err := fn(cur, chain); err != nil {
				return false, err
			}
			clear(chain)
			chain = chain[:0]
		}
		if len(chain) == 0 {
			cur = append(cur[:0], vals...)
		}
		ch, err := ts.decode(v)
		chain = append(chain, spillChange{seq: seq, Change: ch})
		return err == nil, err
	})
	if err == nil && len(chain) > 0 {
		err = fn(cur, chain)
	}
	return err
}
