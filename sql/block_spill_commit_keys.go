package sql

import (
	"slices"

	"streamdb/catalog"
	"streamdb/exec"
)

// checkSpilledUniques checks, at COMMIT, the block's changes to a table
// that spilled against the table's unique indexes and UNIQUE
// constraints' indexes as the table is now (ts: held under its lock), as
// prepareTableCommit checks changes in memory: one value at a time, with
// the changes holding that value in changelog order (the spill's by
// value, then the statements still in memory, tail). A unique check
// meets only the rows holding the value it checks, so each value's
// check is the whole check's for that value.
func (e *Engine) checkSpilledUniques(w *tableWrite, ts *tableState, tail []exec.Change) error {
	d := e.current(w.d)
	for _, ix := range d.Indexes {
		pos, ok := exec.IndexColumns(&ix, ts.cols)
		if !ix.Unique || !ok {
			continue
		}
		one := *d
		one.Indexes = []catalog.Index{ix}
		check := func(group []exec.Change) error { return checkUniqueIndexes(&one, ts, group) }
		if ix.Constraint {
			check = func(group []exec.Change) error { return checkUniqueConstraints(&one, ts, nil, group, nil) }
		}
		if err := eachValueGroup(ts, w.spill, pos, tail, check); err != nil {
			return err
		}
	}
	return nil
}

// eachValueGroup hands fn, for each value of the columns cols that the
// block's own changes hold (none NULL), those changes in changelog
// order: the spill's, then tail's.
func eachValueGroup(ts *tableState, sp *tableSpill, cols []int, tail []exec.Change, fn func([]exec.Change) error) error {
	set := sp.setOf(cols)
	if set < 0 {
		return spillAltered(ts)
	}
	var order []string
	tailOf := map[string][]exec.Change{}
	for _, ch := range tail {
		vals, ok := setValues(cols, ch.Row)
		if !ok {
			continue
		}
		if _, seen := tailOf[string(vals)]; !seen {
			order = append(order, string(vals))
		}
		tailOf[string(vals)] = append(tailOf[string(vals)], ch)
	}
	err := sp.eachValue(set, func(vals []byte, chain []exec.Change) error {
		group := chain
		if t, ok := tailOf[string(vals)]; ok {
			group = append(chain, t...)
			delete(tailOf, string(vals))
		}
		return fn(group)
	})
	if err != nil {
		return err
	}
	for _, v := range order {
		if group, ok := tailOf[v]; ok {
			if err := fn(group); err != nil {
				return err
			}
		}
	}
	return nil
}

// unspillLinked reads back into memory the spilled changes of the
// tables that foreign keys link (linked): a COMMIT checks their foreign
// keys over all their changes at once (enforceForeignKeys). Their
// statements spilled while the block ran, and were checked there by
// key against the spill.
func (t *txn) unspillLinked(tables []*tableWrite, linked []*catalog.Descriptor) error {
	for _, w := range tables {
		if w.spill == nil || !slices.ContainsFunc(linked, func(d *catalog.Descriptor) bool { return d.ID == w.d.ID }) {
			continue
		}
		if err := t.unspill(w); err != nil {
			return err
		}
	}
	return nil
}
