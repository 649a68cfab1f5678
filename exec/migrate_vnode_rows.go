package exec

import (
	"github.com/cockroachdb/pebble/v2"

	"streamdb/catalog"
	"streamdb/plan"
	"streamdb/storage"
)

// The step to catalog.DataflowViewRowVNodes puts, in the key of every row
// of a view, the vnode of the key the row was stored by (what followed
// the table's prefix) between the prefix and that key, and in every entry
// of the view's indexes the same vnode before the row key the entry ends
// with, so that the entry still names its row's whole key. Values stay as
// they are, so the step is exact: the migrated rows and entries are those
// a view of the new format stores for the same changes.

// migrateViewRowVNodes rewrites, in b, the keys of view d's rows and its
// indexes' entries with their rows' vnodes (d.StateVNodes). ok false, b
// untouched: an index entry does not decode.
func migrateViewRowVNodes(b *pebble.Batch, d *catalog.Descriptor, _ plan.Node, _ UpstreamPlans) (bool, error) {
	vnodes := d.StateVNodes()
	table := ViewTablePrefix(d.ID)
	var moves []movedEntry
	err := storage.ScanPrefix(b, table, func(k, v []byte) error {
		moves = append(moves, movedEntry{old: append([]byte(nil), k...),
			key: withRowVNode(k, len(table), vnodes), val: append([]byte(nil), v...)})
		return nil
	})
	if err != nil {
		return false, err
	}
	for i := range d.Indexes {
		ix := &d.Indexes[i]
		prefix := IndexPrefix(d.ID, ix)
		ok := true
		err := storage.ScanPrefix(b, prefix, func(k, v []byte) error {
			rowKey, err := indexRowKey(k[len(prefix):], len(ix.Columns))
			if err != nil {
				ok = false
				return errStopScan
			}
			moves = append(moves, movedEntry{old: append([]byte(nil), k...),
				key: withRowVNode(k, len(k)-len(rowKey), vnodes), val: append([]byte(nil), v...)})
			return nil
		})
		if !ok {
			return false, nil
		}
		if err != nil {
			return false, err
		}
	}
	return true, moveEntries(b, moves)
}
