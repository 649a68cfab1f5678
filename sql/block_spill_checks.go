package sql

import (
	"streamdb/exec"
	"streamdb/sqlerr"
)

// A statement of a block whose changes to a table spilled checks its
// rows against the block's earlier ones there by value (the spill's 'V'
// keys, block_spill_values.go): the rows holding a unique index's value
// (uniqueHolders), the changes holding a UNIQUE constraint's value (the
// base its check counts on top of the table, txUniqueBase), the rows
// holding a foreign key's values (rowsWithValues). Each looks up the
// values the statement's rows hold, never the whole spill.

// spilledWith returns the identities of the rows the block's spill of
// the table changed to or from values vals of columns cols (nil without
// a spill).
func (ts *tableState) spilledWith(cols []int, vals []byte) ([]string, error) {
	if ts.spill == nil {
		return nil, nil
	}
	ids, ok, err := ts.spill.identitiesWith(ts.key, cols, vals)
	if err == nil && !ok {
		err = spillAltered(ts)
	}
	return ids, err
}

// spilledHolders sets, in m, the count of each row identity of a table
// without a primary key that the block's spill changed to or from values
// vals of columns pos: the snapshot's count with the spilled changes
// applied (baseCount). Such a row's identity is the whole row, so each
// of them holds vals.
func (ts *tableState) spilledHolders(pos []int, vals []byte, m map[string]int) error {
	ids, err := ts.spilledWith(pos, vals)
	for _, id := range ids {
		if err != nil {
			break
		}
		var n int
		n, err = ts.BaseCount([]byte(id))
		m[id] = n
	}
	return err
}

// spillAltered is the error of a statement that finds the spill of a
// table without the values its checks look up: the table took a unique
// or foreign key while the statement ran.
func spillAltered(ts *tableState) error {
	return sqlerr.New(sqlerr.SerializationFailure, "table %q was altered while this statement ran", ts.d.Name).
		WithHint("Retry the statement.")
}

// txUniqueBase returns the block's earlier changes to table ts.d that a
// UNIQUE constraint's check of changes must count (uniqueIndex.check's
// base): from the spill, those holding a value of a constraint that
// changes insert (by their backing indexes' columns); then every
// change still in memory.
func (s *session) txUniqueBase(ts *tableState, changes []exec.Change) ([]exec.Change, error) {
	mem := s.txChanges(ts.d)
	if ts.spill == nil {
		return mem, nil
	}
	var cons [][]int
	d := s.e.current(ts.d)
	for i := range d.Indexes {
		if pos, ok := exec.IndexColumns(&d.Indexes[i], ts.cols); ok && constraintOf(d, &d.Indexes[i]) != nil {
			cons = append(cons, pos)
		}
	}
	seen := map[uint64]bool{} // a change holding values of two constraints counts once
	var base []exec.Change
	for _, cols := range cons {
		set := ts.spill.setOf(cols)
		if set < 0 {
			return nil, spillAltered(ts)
		}
		looked := map[string]bool{}
		for _, ch := range changes {
			vals, ok := setValues(cols, ch.Row)
			if ch.Sign < 0 || !ok || looked[string(vals)] {
				continue
			}
			looked[string(vals)] = true
			err := ts.spill.withValues(set, vals, true, func(seq uint64, ch exec.Change) error {
				if !seen[seq] {
					seen[seq] = true
					base = append(base, ch)
				}
				return nil
			})
			if err != nil {
				return nil, err
			}
		}
	}
	return append(base, mem...), nil
}
