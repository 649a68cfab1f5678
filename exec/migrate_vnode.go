package exec

import (
	"github.com/cockroachdb/pebble/v2"

	"streamdb/catalog"
	"streamdb/plan"
	"streamdb/storage"
	"streamdb/storage/keyenc"
)

// The step to catalog.DataflowAggVNodes puts the vnode of an aggregate's
// group key after its tables' prefix, in every key of its groups' table
// and of its min/max values' table, the view's vnode count being
// catalog.DefaultVNodes (the count meta records in the descriptor of a
// view that reaches the format). Keys and values stay otherwise as they
// are, so the step is exact: the migrated tables are those an aggregate
// of the new format keeps for the same input.

// migrateAggVNodes rewrites, in b, the keys of view d's aggregates
// (streaming plan root, format catalog.DataflowIntervalSpans; ups, the
// plans of the views it computes itself) with their vnodes. ok false, b
// untouched: the aggregates' tables cannot be found without building the
// dataflow (planTables), or a key does not decode.
func migrateAggVNodes(b *pebble.Batch, d *catalog.Descriptor, root plan.Node, ups UpstreamPlans) (bool, error) {
	slots, ok := planTables(d, root, ups)
	if !ok {
		return false, nil
	}
	var moves []movedEntry
	for _, s := range slots {
		a, isAgg := s.Node.(*plan.Aggregate)
		if !isAgg {
			continue
		}
		for i, idx := range s.Indexes {
			// The groups' table, then (aggExtremaTable) the values' table,
			// whose keys go on after the group key.
			m, ok, err := vnodeKeyed(b, storage.StatePrefix(d.ID, idx), len(a.GroupBy), i > 0, catalog.DefaultVNodes)
			if err != nil || !ok {
				return false, err
			}
			moves = append(moves, m...)
		}
	}
	return true, moveEntries(b, moves)
}

// vnodeKeyed returns the moves that put, in the table under prefix whose
// keys start with a group key of width columns (the whole key unless
// more), the vnode of that group key among vnodes after prefix. ok
// false: a key does not start with such a group key.
func vnodeKeyed(r storage.Reader, prefix []byte, width int, more bool, vnodes int) ([]movedEntry, bool, error) {
	var moves []movedEntry
	ok := true
	err := storage.ScanPrefix(r, prefix, func(k, v []byte) error {
		rest := k[len(prefix):]
		ks := rest
		if more {
			_, after, err := keyenc.DecodeRow(rest, width)
			if err != nil {
				ok = false
				return nil
			}
			ks = rest[:len(rest)-len(after)]
		}
		key := appendVNodeKey(nil, prefix, vnodes, string(ks))
		key = append(key, rest[len(ks):]...)
		moves = append(moves, movedEntry{old: append([]byte(nil), k...), key: key, val: append([]byte(nil), v...)})
		return nil
	})
	if err != nil || !ok {
		return nil, false, err
	}
	return moves, true, nil
}
