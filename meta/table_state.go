package meta

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/cockroachdb/pebble/v2"

	"streamdb/catalog"
	"streamdb/exec"
	"streamdb/expr"
	"streamdb/plan"
	"streamdb/types"
)

// TableState is a table as one statement sees it: the committed state in
// a Pebble snapshot, then the changes past that state's position
// (acknowledged commits the pipeline has not applied yet, then the
// statement's own transaction's earlier changes), in order. Row
// identities are RowKey's. A TableState is read by one goroutine.
type TableState struct {
	d    *catalog.Descriptor
	cols []types.Column
	key  []int // primary key columns; nil for a table without one
	snap *pebble.Snapshot
	// pending holds the changes past the snapshot's position (see
	// PendingChanges: read it through that).
	pending []exec.Change
	// entries, when read from a log, are the log's entries whose changes
	// pending holds once built: most single-row writes need only a point
	// read through the log's index, not the changes laid out in order.
	entries []*LogEntry
	// log is the table's log when its lock is held for this read (a
	// commit), nil for a transaction's read of its snapshot.
	log *TableLog
	// logVersion is log's version when pending was taken from it: while
	// it holds, pending are the log's entries and its index answers
	// point reads.
	logVersion uint64
	// pendingAt indexes pending by row identity (RowKey): the newest
	// change of each. Built at the first point read of a keyed table.
	pendingAt map[string]int
	// pendingSigns lists, per row identity, the signs of its pending
	// changes in order. Built at the first CountOf.
	pendingSigns map[string][]int8
	// spill, when not nil, holds the changes between the snapshot and
	// pending on disk: a transaction block's older ones (SetSpill).
	spill Spill
}

// OpenTableState reads table d as of now through its log. Close it when
// done.
func OpenTableState(d *catalog.Descriptor, log *TableLog) (*TableState, error) {
	snap, entries, version, err := log.Snapshot(d.ID)
	if err != nil {
		return nil, err
	}
	ts, err := NewTableState(d, snap, nil)
	if err != nil {
		snap.Close()
		return nil, err
	}
	ts.log, ts.logVersion, ts.entries = log, version, entries
	return ts, nil
}

// NewTableState reads table d in snap with pending applied on top. The
// state closes snap when it is closed.
func NewTableState(d *catalog.Descriptor, snap *pebble.Snapshot, pending []exec.Change) (*TableState, error) {
	cols, err := d.Schema()
	if err != nil {
		return nil, err
	}
	ts := &TableState{d: d, cols: cols, snap: snap, pending: pending}
	if len(d.PrimaryKey) > 0 {
		ts.key = primaryKeyColumns(d, cols)
	}
	return ts, nil
}

// primaryKeyColumns returns the positions of d's primary key columns
// among cols.
func primaryKeyColumns(d *catalog.Descriptor, cols []types.Column) []int {
	key := make([]int, len(d.PrimaryKey))
	for i, name := range d.PrimaryKey {
		key[i] = slices.IndexFunc(cols, func(c types.Column) bool { return c.Name == name })
	}
	return key
}

// Descriptor returns the table the state reads.
func (ts *TableState) Descriptor() *catalog.Descriptor { return ts.d }

// Columns returns the table's columns.
func (ts *TableState) Columns() []types.Column { return ts.cols }

// Key returns the positions of the table's primary key columns, nil for
// a table without one.
func (ts *TableState) Key() []int { return ts.key }

// Log returns the table's log when the state was read under its lock
// (OpenTableState) and still takes its pending changes from it, nil
// otherwise.
func (ts *TableState) Log() *TableLog { return ts.log }

// SetSpill puts spill between the snapshot and the pending changes.
func (ts *TableState) SetSpill(spill Spill) { ts.spill = spill }

// AppendPending adds changes after the pending ones. The pending changes
// are then no longer only the log's: point reads stop going through its
// index.
func (ts *TableState) AppendPending(changes []exec.Change) {
	ts.pending = slices.Concat(ts.PendingChanges(), changes)
	ts.log, ts.entries = nil, nil
}

func (ts *TableState) Close() { ts.snap.Close() }

// pendingChanges returns the changes past the snapshot's position, in
// order.
func (ts *TableState) PendingChanges() []exec.Change {
	if ts.entries != nil {
		n := 0
		for _, en := range ts.entries {
			n += len(en.Changes())
		}
		ts.pending = make([]exec.Change, 0, n)
		for _, en := range ts.entries {
			ts.pending = append(ts.pending, en.Changes()...)
		}
		ts.entries = nil
	}
	return ts.pending
}

// hasPending reports whether any change is past the snapshot's position.
func (ts *TableState) HasPending() bool {
	return len(ts.pending) > 0 || len(ts.entries) > 0
}

// rows returns every row of the table.
func (ts *TableState) Rows(ctx context.Context) ([]types.Row, error) {
	if ts.spill != nil {
		var out []types.Row
		err := ts.EachRow(ctx, func(r types.Row) error {
			out = append(out, r)
			return nil
		})
		return out, err
	}
	scan, err := TableScan(ts.d)
	if err != nil {
		return nil, err
	}
	rows, err := exec.RunBatch(ctx, scan, ts.snap)
	if err != nil {
		return nil, err
	}
	return ApplyChanges(ts.key, rows, ts.PendingChanges()), nil
}

// rowsWhere returns the rows an UPDATE or DELETE whose WHERE is cond (nil
// for none) must look at: when cond fixes the whole primary key to
// constants (= or IN), the rows under those keys (point reads, as
// exec.lookupByKey does for SELECT); when it restricts the leading
// columns of an index (exec.ChooseIndex), the rows the index points to
// and the pending rows; otherwise the rows cond holds for, read from an
// iterator over the table (every row, when cond is nil or volatile: it is
// evaluated once per row). The caller still evaluates cond on each row.
func (ts *TableState) RowsWhere(ctx context.Context, cond expr.Expr) ([]types.Row, error) {
	if cond == nil || expr.VolatileCall(cond) != "" {
		return ts.Rows(ctx)
	}
	if ts.key != nil {
		scan, err := TableScan(ts.d)
		if err != nil {
			return nil, err
		}
		scan.StoredKey = exec.TableKey(scan)
		if keys, ok := exec.PinnedKeys(cond, scan); ok {
			prefix := len(exec.ViewTablePrefix(ts.d.ID))
			var out []types.Row
			for _, k := range keys {
				row, err := ts.Lookup(k[prefix:])
				if err != nil {
					return nil, err
				}
				if row != nil {
					out = append(out, row)
				}
			}
			return out, nil
		}
		if rows, ok, err := ts.RowsByIndex(cond, scan); ok {
			return rows, err
		}
	}
	var out []types.Row
	err := ts.EachRow(ctx, func(row types.Row) error {
		ok, err := expr.Holds(cond, row)
		if ok {
			out = append(out, row)
		}
		return err
	})
	return out, err
}

// pendingChange returns the newest pending change of the row with
// identity key (RowKey) of a keyed table, if there is one.
func (ts *TableState) PendingChange(key []byte) (exec.Change, bool) {
	if !ts.HasPending() {
		return exec.Change{}, false
	}
	if ts.log != nil && ts.pendingAt == nil {
		if ch, found, ok := ts.log.NewestChange(ts.logVersion, ts.key, key); ok {
			return ch, found
		}
	}
	if ts.pendingAt == nil {
		pending := ts.PendingChanges()
		ts.pendingAt = make(map[string]int, len(pending))
		for i, ch := range pending {
			ts.pendingAt[string(RowKey(ts.key, ch.Row))] = i
		}
	}
	i, ok := ts.pendingAt[string(key)]
	if !ok {
		return exec.Change{}, false
	}
	return ts.pending[i], true
}

// lookup returns the row of a keyed table under key (its primary key in
// state key encoding), or nil if there is none.
func (ts *TableState) Lookup(key []byte) (types.Row, error) {
	if ch, ok := ts.PendingChange(key); ok {
		if ch.Sign > 0 {
			return ch.Row, nil
		}
		return nil, nil
	}
	if ch, ok, err := ts.spilledChange(key); err != nil || ok {
		if ch.Sign > 0 {
			return ch.Row, err
		}
		return nil, err
	}
	v, closer, err := ts.snap.Get(append(exec.ViewTablePrefix(ts.d.ID), key...))
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer closer.Close()
	row, _, err := exec.DecodeViewValue(bytes.Clone(v), len(ts.cols))
	return row, err
}

// keyTaken reports whether the table holds a row under key (a primary key
// encoded as the state table's key, exec.TableKey).
func (ts *TableState) KeyTaken(key []byte) (bool, error) {
	if ch, ok := ts.PendingChange(key); ok {
		return ch.Sign > 0, nil
	}
	if ch, ok, err := ts.spilledChange(key); err != nil || ok {
		return ch.Sign > 0, err
	}
	_, closer, err := ts.snap.Get(append(exec.ViewTablePrefix(ts.d.ID), key...))
	if errors.Is(err, pebble.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return true, closer.Close()
}

// applyChanges returns rows with changes applied in order: a deletion
// removes the row with the deleted row's identity (one of them, for a
// table without a key), an insertion adds its row (replacing the row
// under its key). rows may be reordered.
func ApplyChanges(key []int, rows []types.Row, changes []exec.Change) []types.Row {
	if len(changes) == 0 {
		return rows
	}
	at := make(map[string][]int, len(rows)) // identity -> indexes into rows
	for i, r := range rows {
		k := string(RowKey(key, r))
		at[k] = append(at[k], i)
	}
	for _, ch := range changes {
		k := string(RowKey(key, ch.Row))
		idx := at[k]
		if ch.Sign < 0 {
			if len(idx) > 0 {
				rows[idx[len(idx)-1]] = nil
				at[k] = idx[:len(idx)-1]
			}
			continue
		}
		if key != nil && len(idx) > 0 {
			rows[idx[0]] = ch.Row
			continue
		}
		at[k] = append(idx, len(rows))
		rows = append(rows, ch.Row)
	}
	out := rows[:0]
	for _, r := range rows {
		if r != nil {
			out = append(out, r)
		}
	}
	return out
}

// rowsByIndex returns the rows of a keyed table that cond can hold for,
// read through the index exec.ChooseIndex picks for it: the current row
// (pending changes applied) under each key the snapshot's index entries
// name, then the pending rows not among them. Each row comes once; some
// may fail cond. ok is false when no index fits.
func (ts *TableState) RowsByIndex(cond expr.Expr, scan *plan.Scan) (rows []types.Row, ok bool, err error) {
	if ts.spill != nil {
		// The snapshot's index does not hold the spilled rows.
		return nil, false, nil
	}
	ir, ok := exec.ChooseIndex(cond, scan)
	if !ok {
		return nil, false, nil
	}
	keys, err := ir.RowKeys(ts.snap)
	if err != nil {
		return nil, true, err
	}
	seen := make(map[string]bool, len(keys))
	for _, k := range keys {
		seen[string(k)] = true
		row, err := ts.Lookup(k)
		if err != nil {
			return nil, true, err
		}
		if row != nil {
			rows = append(rows, row)
		}
	}
	for _, ch := range ts.PendingChanges() {
		k := string(RowKey(ts.key, ch.Row))
		if seen[k] {
			continue
		}
		seen[k] = true
		if row, err := ts.Lookup([]byte(k)); err != nil || row == nil {
			if err != nil {
				return nil, true, err
			}
			continue
		} else {
			rows = append(rows, row)
		}
	}
	return rows, true, nil
}

// eachRow hands the rows rows returns to emit, in the same order, without
// holding them: the stored rows straight from an iterator over the
// snapshot, with the pending changes applied as applyChanges applies them
// (a row deleted or replaced in place, the inserted rows after the
// stored ones), which needs only the changes and the stored rows of the
// identities they touch.
func (ts *TableState) EachRow(ctx context.Context, emit func(types.Row) error) error {
	scan, err := TableScan(ts.d)
	if err != nil {
		return err
	}
	pending := ts.PendingChanges()
	if len(pending) == 0 {
		return ts.eachBase(ctx, scan, emit)
	}
	// stored counts the stored rows of each identity the changes touch.
	stored := map[string]int{}
	for _, ch := range pending {
		stored[string(RowKey(ts.key, ch.Row))] = 0
	}
	for k := range stored {
		n, err := ts.BaseCount([]byte(k))
		if err != nil {
			return err
		}
		stored[k] = n
	}
	// applyChanges over positions: a stored row of identity k is
	// stored position -1 (they are alike, and applyChanges drops the
	// last ones first), an added row its index in added.
	type fate struct {
		drop    int       // stored rows of the identity deleted, the last ones
		replace types.Row // a keyed table's stored row replaced by this
	}
	fates := map[string]*fate{}
	at := map[string][]int{}
	var added []types.Row
	for k, n := range stored {
		fates[k] = &fate{}
		for range n {
			at[k] = append(at[k], -1)
		}
	}
	for _, ch := range pending {
		k := string(RowKey(ts.key, ch.Row))
		idx := at[k]
		if ch.Sign < 0 {
			if len(idx) > 0 {
				if i := idx[len(idx)-1]; i < 0 {
					fates[k].drop++
				} else {
					added[i] = nil
				}
				at[k] = idx[:len(idx)-1]
			}
			continue
		}
		if ts.key != nil && len(idx) > 0 {
			if i := idx[0]; i < 0 {
				fates[k].replace = ch.Row
			} else {
				added[i] = ch.Row
			}
			continue
		}
		at[k] = append(idx, len(added))
		added = append(added, ch.Row)
	}
	seen := map[string]int{}
	err = ts.eachBase(ctx, scan, func(r types.Row) error {
		k := string(RowKey(ts.key, r))
		f, ok := fates[k]
		if !ok {
			return emit(r)
		}
		i := seen[k]
		seen[k] = i + 1
		if i >= stored[k]-f.drop {
			return nil
		}
		if f.replace != nil {
			r = f.replace
		}
		return emit(r)
	})
	if err != nil {
		return err
	}
	for _, r := range added {
		if r != nil {
			if err := emit(r); err != nil {
				return err
			}
		}
	}
	return nil
}

// snapCount returns how many rows of identity key (RowKey) the snapshot
// holds, pending changes aside: 0 or 1 under a primary key; for a table
// without one, the multiplicity stored under the row's value encoding
// (its state table keeps each distinct row once, with a count).
func (ts *TableState) SnapCount(key []byte) (int, error) {
	v, closer, err := ts.snap.Get(append(exec.ViewTablePrefix(ts.d.ID), key...))
	if errors.Is(err, pebble.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	defer closer.Close()
	if ts.key != nil {
		return 1, nil
	}
	n, k := binary.Uvarint(v)
	if k <= 0 {
		return 0, fmt.Errorf("table %q: bad row multiplicity in its state", ts.d.Name)
	}
	return int(n), nil
}

// countOf returns how many rows of identity key (RowKey) the table holds:
// the snapshot's count with the pending changes of that identity applied
// in order (a deletion removes one row if there is one). It reads one key
// of the snapshot, not the table.
func (ts *TableState) CountOf(key []byte) (int, error) {
	n, err := ts.BaseCount(key)
	if err != nil {
		return 0, err
	}
	if ts.HasPending() && ts.pendingSigns == nil {
		ts.pendingSigns = map[string][]int8{}
		for _, ch := range ts.PendingChanges() {
			k := string(RowKey(ts.key, ch.Row))
			ts.pendingSigns[k] = append(ts.pendingSigns[k], ch.Sign)
		}
	}
	for _, sign := range ts.pendingSigns[string(key)] {
		switch {
		case sign < 0 && n > 0:
			n--
		case sign > 0 && (ts.key == nil || n == 0):
			n++
		}
	}
	return n, nil
}
