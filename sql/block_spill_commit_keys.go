package sql

import (
	"math"

	"streamdb/catalog"
	"streamdb/exec"
	"streamdb/sqlerr"
)

// checkSpilledUniques checks, at COMMIT, the block's changes to a table
// that spilled against the table's unique indexes and UNIQUE
// constraints' indexes as the table is now (ts: held under its lock), as
// prepareTableCommit checks changes in memory: one value at a time, with
// the changes holding that value in changelog order (the spill's by
// value, then the statements still in memory, tail). A unique check
// meets only the rows holding the value it checks, so each value's
// check is the whole check's for that value. Of the values that fail,
// the one named is the one the check in memory names: the value whose
// first insertion came first.
func (e *Engine) checkSpilledUniques(w *tableWrite, ts *tableState, tail []exec.Change) error {
	d := e.current(w.d)
	b := &blockChanges{d: w.d, key: ts.key, spill: w.spill.commitView(), tail: tail, tailSeq: w.spill.end}
	// As prepareTableCommit: unique indexes, then UNIQUE constraints.
	for _, constraints := range []bool{false, true} {
		for _, ix := range d.Indexes {
			pos, ok := exec.IndexColumns(&ix, ts.cols)
			if !ix.Unique || !ok || ix.Constraint != constraints {
				continue
			}
			one := *d
			one.Indexes = []catalog.Index{ix}
			check := func(group []exec.Change) error { return checkUniqueIndexes(&one, ts, group) }
			if ix.Constraint {
				check = func(group []exec.Change) error { return checkUniqueConstraints(&one, ts, nil, group, nil) }
			}
			if err := firstUniqueFailure(b, pos, check); err != nil {
				return err
			}
		}
	}
	return nil
}

// firstUniqueFailure runs check over the block's changes holding each
// value of columns pos, and returns the 23505 of the value first
// inserted among those that fail (or another error at once).
func firstUniqueFailure(b *blockChanges, pos []int, check func([]exec.Change) error) error {
	var failed error
	var failedAt uint64
	var group []exec.Change
	err := b.eachValue(pos, func(chain []spillChange) error {
		group = group[:0]
		first := uint64(math.MaxUint64)
		for _, ch := range chain {
			group = append(group, ch.Change)
			if ch.Sign > 0 {
				first = min(first, ch.seq)
			}
		}
		err := check(group)
		if err != nil && sqlerr.Code(err) != sqlerr.UniqueViolation {
			return err
		}
		if err != nil && (failed == nil || first < failedAt) {
			failed, failedAt = err, first
		}
		return nil
	})
	if err != nil {
		return err
	}
	return failed
}
