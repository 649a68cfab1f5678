package sql

import (
	"bytes"
	"context"

	"streamdb/exec"
	"streamdb/plan"
	"streamdb/types"
)

// A statement of a block whose changes spilled reads the table as its
// snapshot, then the spill, then the changes still in memory
// (tableState.pending): a point read looks the key up in each, newest
// first; a scan streams the snapshot's rows, each with its spilled
// changes applied (one lookup in the spill per row), then the rows only
// the spill holds, with the changes in memory applied over both as
// eachRow applies them. Nothing of the spill is held whole.

// spilledChange returns the newest spilled change of the row with
// identity key of a keyed table, if there is one.
func (ts *tableState) spilledChange(key []byte) (exec.Change, bool, error) {
	if ts.spill == nil {
		return exec.Change{}, false, nil
	}
	return ts.spill.newest(key)
}

// baseCount is snapCount with the spilled changes of the identity
// applied: how many rows of it the table holds below pending.
func (ts *tableState) baseCount(key []byte) (int, error) {
	n, err := ts.snapCount(key)
	if err != nil || ts.spill == nil {
		return n, err
	}
	chain, err := ts.spill.chain(key)
	if err != nil || len(chain) == 0 {
		return n, err
	}
	if ts.key != nil {
		if chain[len(chain)-1].Sign > 0 {
			return 1, nil
		}
		return 0, nil
	}
	return applySigns(false, n, chain), nil
}

// eachBase hands emit the rows of the snapshot with the spilled changes
// applied, each identity's rows together.
func (ts *tableState) eachBase(ctx context.Context, scan *plan.Scan, emit func(types.Row) error) error {
	if ts.spill == nil {
		return exec.StreamBatch(ctx, scan, ts.snap, emit)
	}
	// skip is the identity of a table without a key whose copies were
	// all emitted at its first (the scan hands them over one after
	// another).
	var skip []byte
	err := exec.StreamBatch(ctx, scan, ts.snap, func(r types.Row) error {
		id := rowKey(ts.key, r)
		if skip != nil && bytes.Equal(id, skip) {
			return nil
		}
		skip = nil
		chain, err := ts.spill.chain(id)
		if err != nil {
			return err
		}
		if len(chain) == 0 {
			return emit(r)
		}
		if ts.key != nil {
			if last := chain[len(chain)-1]; last.Sign > 0 {
				return emit(last.Row)
			}
			return nil
		}
		n, err := ts.snapCount(id)
		if err != nil {
			return err
		}
		skip = id
		for range applySigns(false, n, chain) {
			if err := emit(r); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	// The identities the snapshot does not hold.
	return ts.spill.eachIdentity(func(id []byte, chain []spillChange) error {
		n, err := ts.snapCount(id)
		if err != nil || n > 0 {
			return err
		}
		if ts.key != nil {
			if last := chain[len(chain)-1]; last.Sign > 0 {
				return emit(last.Row)
			}
			return nil
		}
		var row types.Row
		for _, ch := range chain {
			if ch.Sign > 0 {
				row = ch.Row
			}
		}
		for range applySigns(false, 0, chain) {
			if err := emit(row); err != nil {
				return err
			}
		}
		return nil
	})
}
