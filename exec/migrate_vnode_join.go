package exec

import (
	"github.com/cockroachdb/pebble/v2"

	"streamdb/catalog"
	"streamdb/plan"
	"streamdb/storage"
)

// The step to catalog.DataflowJoinVNodes puts, in every page key of a
// join's state (joinStateByKey: side | len(join key) | join key | page
// id), the vnode of the join key after the side, the view's vnode count
// being its catalog.StateVNodes. Values, page ids and the rest of each key
// stay as they are, so the step is exact: the migrated table is the one a
// join of the new format keeps for the same input.

// migrateJoinVNodes rewrites, in b, the page keys of every join of view d
// (streaming plan root, format catalog.DataflowVNodeKeys; ups, the plans
// of the views it computes itself) with their join keys' vnodes. ok
// false, b untouched: the joins' tables cannot be found without building
// the dataflow (planTables), or a key is not a page key.
func migrateJoinVNodes(b *pebble.Batch, d *catalog.Descriptor, root plan.Node, ups UpstreamPlans) (bool, error) {
	slots, ok := planTables(d, root, ups)
	if !ok {
		return false, nil
	}
	vnodes := d.StateVNodes()
	var moves []movedEntry
	for _, s := range slots {
		if _, isJoin := s.Node.(*plan.Join); !isJoin {
			continue
		}
		m, ok, err := joinPagesWithVNodes(b, storage.StatePrefix(d.ID, s.Indexes[0]), vnodes)
		if err != nil || !ok {
			return false, err
		}
		moves = append(moves, m...)
	}
	return true, moveEntries(b, moves)
}

// joinPagesWithVNodes returns the moves that put, in each page key of the
// join state under prefix, the vnode of its join key among vnodes after
// its side. ok false: a key is not a page key without a vnode.
func joinPagesWithVNodes(r storage.Reader, prefix []byte, vnodes int) ([]movedEntry, bool, error) {
	var moves []movedEntry
	ok := true
	err := storage.ScanPrefix(r, prefix, func(k, v []byte) error {
		rest := k[len(prefix):]
		if len(rest) < 1 || rest[0] > 1 {
			ok = false
			return nil
		}
		jk, id, err := readLenPrefixed(rest[1:])
		if err != nil || len(id) != 8 {
			ok = false
			return nil
		}
		key := appendBucketPrefix(append([]byte(nil), prefix...), rest[0], vnodes, string(jk))
		key = append(key, id...)
		moves = append(moves, movedEntry{old: append([]byte(nil), k...), key: key, val: append([]byte(nil), v...)})
		return nil
	})
	if err != nil || !ok {
		return nil, false, err
	}
	return moves, true, nil
}
