package meta

import (
	"bytes"
	"errors"
	"slices"

	"github.com/cockroachdb/pebble/v2"

	"streamdb/exec"
	"streamdb/storage"
	"streamdb/storage/keyenc"
	"streamdb/types"
)

// Reads of a TableState's snapshot alone, its pending changes and spill
// aside: for the checks that find candidate rows through an index's
// entries and then read each row as the statement sees it (Lookup).

// EachStoredKey hands fn, in key order, each key of the snapshot that
// starts with prefix (exec.ViewTablePrefix's or exec.IndexPrefix's, with
// values after it). The key is valid until fn returns.
func (ts *TableState) EachStoredKey(prefix []byte, fn func(key []byte) error) error {
	it, err := ts.snap.NewIter(&pebble.IterOptions{LowerBound: prefix, UpperBound: storage.PrefixEnd(prefix)})
	if err != nil {
		return err
	}
	for ok := it.First(); ok; ok = it.Next() {
		if err := fn(it.Key()); err != nil {
			it.Close()
			return err
		}
	}
	return errors.Join(it.Error(), it.Close())
}

// StoredRow returns the row the snapshot holds under identity id and its
// multiplicity (1 under a primary key); ok is false when it holds none.
func (ts *TableState) StoredRow(id []byte) (row types.Row, n uint64, ok bool, err error) {
	v, closer, err := ts.snap.Get(append(exec.ViewTablePrefix(ts.d.ID), id...))
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, 0, false, nil
	}
	if err != nil {
		return nil, 0, false, err
	}
	defer closer.Close()
	row, n, err = exec.DecodeViewValue(bytes.Clone(v), len(ts.cols))
	return row, n, err == nil, err
}

// SkipKeyValues returns key past its first n values in key encoding (an
// index entry's columns before the row's identity).
func SkipKeyValues(key []byte, n int) ([]byte, error) {
	var err error
	for range n {
		if _, key, err = keyenc.Decode(key); err != nil {
			return nil, err
		}
	}
	return key, nil
}

// KeyTakenInRange returns KeyTaken without a read of the snapshot for a
// key outside the range of its stored keys: a load into an empty table,
// or of keys past its largest, reads nothing. (The pending changes are
// looked at first, as KeyTaken does.)
func (ts *TableState) KeyTakenInRange() (func(key []byte) (bool, error), error) {
	prefix := exec.ViewTablePrefix(ts.d.ID)
	it, err := ts.snap.NewIter(&pebble.IterOptions{LowerBound: prefix, UpperBound: storage.PrefixEnd(prefix)})
	if err != nil {
		return nil, err
	}
	var lo, hi []byte
	empty := !it.First()
	if !empty {
		lo = slices.Clone(it.Key()[len(prefix):])
		if it.Last() {
			hi = slices.Clone(it.Key()[len(prefix):])
		}
	}
	if err := errors.Join(it.Error(), it.Close()); err != nil {
		return nil, err
	}
	return func(key []byte) (bool, error) {
		if _, ok := ts.PendingChange(key); !ok && (empty || bytes.Compare(key, lo) < 0 || bytes.Compare(key, hi) > 0) {
			return false, nil
		}
		return ts.KeyTaken(key)
	}, nil
}

// PendingWithValues returns, in order, the pending changes whose columns
// pos (none NULL) encode to vals (exec.AppendIndexValues): from the log's
// value index while the state's view of the log's entries is the log's,
// else by going over them.
func (ts *TableState) PendingWithValues(pos []int, vals []byte) []exec.Change {
	if !ts.HasPending() {
		return nil
	}
	if ts.log != nil {
		if changes, ok := ts.log.ChangesWithValues(ts.logVersion, pos, vals); ok {
			return changes
		}
	}
	var out []exec.Change
	var buf []byte
	for _, ch := range ts.PendingChanges() {
		if AnyNullAt(ch.Row, pos) {
			continue
		}
		buf = exec.AppendIndexValues(buf[:0], ch.Row, pos)
		if bytes.Equal(buf, vals) {
			out = append(out, ch)
		}
	}
	return out
}
