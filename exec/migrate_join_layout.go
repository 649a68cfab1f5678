package exec

import (
	"encoding/binary"

	"github.com/cockroachdb/pebble/v2"

	"streamdb/catalog"
	"streamdb/plan"
	"streamdb/storage"
)

// The steps to catalog.DataflowJoinStateByID and DataflowJoinStatePaged
// change only where a join's entries are stored, not what they hold:
//
//   - by id: key side|len(join key)|join key|row, value counts becomes
//     key id, value side|counts|len(join key)|join key|row; ids are
//     handed out in key order, and the join restores its next id as one
//     past the largest;
//   - by page: each entry stored by id becomes a page of its own under
//     the same key, value side|counts|len(join key)|join key|len(row)|row.
//     A join of this format gives every row of a side that is not
//     append-only a page of its own and packs the new rows of an
//     append-only side; a page of one entry is read the same on either.
//
// Both are exact, for the views whose join's state table joinTableIndex
// finds.

// migrateJoinByID rewrites, in b, view d's join state (streaming plan
// root, format catalog.DataflowNarrowRows) into the layout of
// DataflowJoinStateByID. ok false, b untouched: the table cannot be found
// without building the dataflow, or an entry is not of the old layout.
func migrateJoinByID(b *pebble.Batch, d *catalog.Descriptor, root plan.Node, ups UpstreamPlans) (bool, error) {
	j, idx, ok := joinTableIndex(d, root, ups)
	if !ok {
		return false, nil
	}
	return joinRowsByID(b, b, [2]int{len(j.Left.Schema()), len(j.Right.Schema())}, storage.StatePrefix(d.ID, idx))
}

// joinRowsByID rewrites, in b, the joinStateRowInKey state under prefix
// (input rows of widths) into joinStateByID.
func joinRowsByID(r storage.Reader, b *pebble.Batch, widths [2]int, prefix []byte) (bool, error) {
	var entries []movedEntry
	ok := true
	err := storage.ScanPrefix(r, prefix, func(k, v []byte) error {
		side, jk, enc, count, matches, good := readRowInKeyEntry(k[len(prefix):], v, widths)
		if !good {
			ok = false
			return nil
		}
		key := binary.BigEndian.AppendUint64(append([]byte(nil), prefix...), uint64(len(entries)))
		val := appendEntryHead(nil, &joinEntry{side: side, count: count, matches: matches, key: string(jk)})
		entries = append(entries, movedEntry{old: append([]byte(nil), k...), key: key, val: append(val, enc...)})
		return nil
	})
	if err != nil || !ok {
		return false, err
	}
	return true, moveEntries(b, entries)
}

// migrateJoinPages rewrites, in b, view d's join state (streaming plan
// root, format catalog.DataflowJoinStateByID) into the layout of
// DataflowJoinStatePaged. ok false, b untouched: as migrateJoinByID.
func migrateJoinPages(b *pebble.Batch, d *catalog.Descriptor, root plan.Node, ups UpstreamPlans) (bool, error) {
	if _, idx, ok := joinTableIndex(d, root, ups); ok {
		return joinEntriesAsPages(b, b, storage.StatePrefix(d.ID, idx))
	}
	return false, nil
}

// joinEntriesAsPages rewrites, in b, the joinStateByID state under prefix
// into joinStateByPage, a page per entry.
func joinEntriesAsPages(r storage.Reader, b *pebble.Batch, prefix []byte) (bool, error) {
	type entry struct{ key, val []byte }
	var entries []entry
	ok := true
	err := storage.ScanPrefix(r, prefix, func(k, v []byte) error {
		if len(k) != len(prefix)+8 {
			ok = false
			return nil
		}
		e, jk, row, err := readEntryHead(v)
		if err != nil {
			ok = false
			return nil
		}
		e.key, e.rowKey = string(jk), string(row)
		entries = append(entries, entry{key: append([]byte(nil), k...), val: appendPageEntry(nil, e)})
		return nil
	})
	if err != nil || !ok {
		return false, err
	}
	for _, e := range entries {
		if err := b.Set(e.key, e.val, nil); err != nil {
			return false, err
		}
	}
	return true, nil
}
