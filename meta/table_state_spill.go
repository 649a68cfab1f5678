package meta

import (
	"bytes"
	"context"

	"streamdb/exec"
	"streamdb/plan"
	"streamdb/types"
)

// A statement of a block whose changes spilled reads the table as its
// snapshot, then the spill, then the changes still in memory
// (TableState.pending): a point read looks the key up in each, newest
// first; a scan streams the snapshot's rows, each with its spilled
// changes applied (one lookup in the spill per row), then the rows only
// the spill holds, with the changes in memory applied over both as
// EachRow applies them. Nothing of the spill is held whole.

// Spill is the part of a transaction block's changes to one table that
// the block keeps on disk (sql's block spill), as a TableState reads it.
// Identities are RowKey's; a chain is one identity's changes, oldest
// first.
type Spill interface {
	// Newest returns the newest change of the identity of a keyed table.
	Newest(identity []byte) (ch exec.Change, ok bool, err error)
	// Chain returns the changes of the identity.
	Chain(identity []byte) ([]exec.Change, error)
	// EachIdentity hands fn each identity the spill holds changes of, in
	// key order, with its chain (valid until fn returns).
	EachIdentity(fn func(identity []byte, chain []exec.Change) error) error
}

// applySigns returns the count of an identity's rows after chain's
// changes on top of n of them: a deletion removes one if there is one, an
// insertion adds one (under a primary key, only where there is none).
func applySigns(keyed bool, n int, chain []exec.Change) int {
	for _, ch := range chain {
		switch {
		case ch.Sign < 0 && n > 0:
			n--
		case ch.Sign > 0 && (!keyed || n == 0):
			n++
		}
	}
	return n
}

// spilledChange returns the newest spilled change of the row with
// identity key of a keyed table, if there is one.
func (ts *TableState) spilledChange(key []byte) (exec.Change, bool, error) {
	if ts.spill == nil {
		return exec.Change{}, false, nil
	}
	return ts.spill.Newest(key)
}

// BaseCount is SnapCount with the spilled changes of the identity
// applied: how many rows of it the table holds below pending.
func (ts *TableState) BaseCount(key []byte) (int, error) {
	n, err := ts.SnapCount(key)
	if err != nil || ts.spill == nil {
		return n, err
	}
	chain, err := ts.spill.Chain(key)
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
func (ts *TableState) eachBase(ctx context.Context, scan *plan.Scan, emit func(types.Row) error) error {
	if ts.spill == nil {
		return exec.StreamBatch(ctx, scan, ts.snap, emit)
	}
	// skip is the identity of a table without a key whose copies were
	// all emitted at its first (the scan hands them over one after
	// another).
	var skip []byte
	err := exec.StreamBatch(ctx, scan, ts.snap, func(r types.Row) error {
		id := RowKey(ts.key, r)
		if skip != nil && bytes.Equal(id, skip) {
			return nil
		}
		skip = nil
		chain, err := ts.spill.Chain(id)
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
		n, err := ts.SnapCount(id)
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
	return ts.spill.EachIdentity(func(id []byte, chain []exec.Change) error {
		n, err := ts.SnapCount(id)
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
