package exec

import (
	"encoding/binary"
	"fmt"

	"github.com/cockroachdb/pebble/v2"

	"streamdb/catalog"
	"streamdb/plan"
	"streamdb/storage"
	"streamdb/storage/keyenc"
	"streamdb/types"
)

// The step to catalog.DataflowTopNStateByKey re-keys a top-N's state: from
// prefix + row -> varint count to prefix + partition key + sort key + row
// -> varint count, uvarint head (op_topn_state.go). Every entry of the new
// layout is a function of the old entry's row and count, so the step is
// exact; it is taken for a view whose one top-N has a state table whose
// index is known without building the dataflow (topNTableIndex).

// topNTableIndex returns the one top-N of view d's dataflow (streaming
// plan root, ups the plans of the views it computes itself) and its state
// table index, ok false when it cannot be told without building the
// dataflow (planTables) or the dataflow has more than one.
func topNTableIndex(d *catalog.Descriptor, root plan.Node, ups UpstreamPlans) (*plan.TopN, uint16, bool) {
	return oneTable(d, root, ups, plan.StreamingTopN)
}

// migrateTopNState rewrites, in b, view d's top-N state (streaming plan
// root, format catalog.DataflowViewEdges) into the layout of
// DataflowTopNStateByKey. ok is false, and b untouched, when the top-N's
// table cannot be found without building the dataflow or holds an entry
// that is not of the old layout; the view then stays at its format.
func migrateTopNState(b *pebble.Batch, d *catalog.Descriptor, root plan.Node, ups UpstreamPlans) (bool, error) {
	t, idx, ok := topNTableIndex(d, root, ups)
	if !ok {
		return false, nil
	}
	return rekeyTopN(b, b, t, storage.StatePrefix(d.ID, idx), catalog.DataflowTopNStateByKey)
}

// rekeyTopN rewrites, in b, the top-N state under prefix from the row
// keyed layout to the layout of format to (>= DataflowTopNStateByKey):
// each old key is deleted and its entry set under its new key. ok false:
// an entry is not of the old layout (a row of the top-N's input width and
// a lone count), and nothing is written.
func rekeyTopN(r storage.Reader, b *pebble.Batch, t *plan.TopN, prefix []byte, to catalog.FormatVersion) (bool, error) {
	op := &topNOp{t: t, inWidth: len(t.Input.Schema()), byKey: to >= catalog.DataflowTopNStateByKey, appendKey: keyAppender(to)}
	var entries []movedEntry
	ok := true
	err := storage.ScanPrefix(r, prefix, func(k, v []byte) error {
		n, size := binary.Varint(v)
		if size <= 0 || size != len(v) {
			ok = false
			return nil
		}
		row, rest, err := keyenc.DecodeRow(k[len(prefix):], op.inWidth)
		if err != nil || len(rest) != 0 {
			ok = false
			return nil
		}
		key, val, err := op.rekeyed(row, n)
		if err != nil {
			// A row the top-N cannot rank was never kept by it.
			ok = false
			return nil
		}
		entries = append(entries, movedEntry{old: append([]byte(nil), k...), key: append(append([]byte(nil), prefix...), key...), val: val})
		return nil
	})
	if err != nil || !ok {
		return false, err
	}
	return true, moveEntries(b, entries)
}

// rekeyed is the state key (without the operator's prefix) and value of
// row, kept n times, in op's layout.
func (op *topNOp) rekeyed(row types.Row, n int64) ([]byte, []byte, error) {
	pk, err := partitionKey(op.t, row, op.appendKey)
	if err != nil {
		return nil, nil, fmt.Errorf("top-n state: %w", err)
	}
	e, err := newRankEntry(op.t.Order, row)
	if err != nil {
		return nil, nil, fmt.Errorf("top-n state: %w", err)
	}
	key, head := op.entryKey(pk, e)
	return []byte(key), op.stateValue(n, head), nil
}
