package exec

import (
	"errors"

	"github.com/cockroachdb/pebble/v2"

	"streamdb/catalog"
	"streamdb/plan"
	"streamdb/storage"
	"streamdb/storage/keyenc"
)

// The step to catalog.DataflowVNodeKeys puts the vnode of an aggregate's
// group key after its tables' prefix, in every key of its groups' table
// and of its min/max values' table, and the vnode of a top-N's partition
// key after its table's prefix, the view's vnode count being
// catalog.DefaultVNodes (the count meta records in the descriptor of a
// view that reaches the format). Keys and values stay otherwise as they
// are, so the step is exact: the migrated tables are those an aggregate
// of the new format keeps for the same input.

// migrateVNodeKeys rewrites, in b, the keys of view d's aggregates and
// top-Ns (streaming plan root, format catalog.DataflowIntervalSpans; ups, the
// plans of the views it computes itself) with their vnodes. ok false, b
// untouched: the aggregates' tables cannot be found without building the
// dataflow (planTables), or a key does not decode.
func migrateVNodeKeys(b *pebble.Batch, d *catalog.Descriptor, root plan.Node, ups UpstreamPlans) (bool, error) {
	slots, ok := planTables(d, root, ups)
	if !ok {
		return false, nil
	}
	var moves []movedEntry
	rekey := func(idx uint16, width int, more bool) error {
		m, ok, err := vnodeKeyed(b, storage.StatePrefix(d.ID, idx), width, more, catalog.DefaultVNodes)
		if err == nil && !ok {
			err = errNotRekeyed
		}
		moves = append(moves, m...)
		return err
	}
	for _, s := range slots {
		var err error
		switch n := s.Node.(type) {
		case *plan.Aggregate:
			for i, idx := range s.Indexes {
				// The groups' table, then (aggExtremaTable) the values'
				// table, whose keys go on after the group key.
				if err = rekey(idx, len(n.GroupBy), i > 0); err != nil {
					break
				}
			}
		case *plan.Sort, *plan.Limit, *plan.TopN:
			// Partition key, sort key, row (topNOp.entryKey).
			err = rekey(s.Indexes[0], len(plan.StreamingTopN(n).PartitionBy), true)
		}
		if err == errNotRekeyed {
			return false, nil
		}
		if err != nil {
			return false, err
		}
	}
	return true, moveEntries(b, moves)
}

// errNotRekeyed stops migrateVNodeKeys at a table whose keys do not
// decode: the view stays at its format.
var errNotRekeyed = errors.New("state keys do not decode")

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
