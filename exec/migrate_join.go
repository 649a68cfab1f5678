package exec

import (
	"encoding/binary"

	"github.com/cockroachdb/pebble/v2"

	"streamdb/catalog"
	"streamdb/plan"
	"streamdb/storage"
	"streamdb/storage/keyenc"
	"streamdb/types"
)

// The step to catalog.DataflowNarrowRows narrows a join's inputs to the
// columns read above it or by its keys and condition (plan.PruneColumns),
// so the rows its state keeps (joinStateRowInKey: side, join key and row
// in the key, counts in the value) lose the other columns. The new state
// is a function of the old: each row projected to its kept columns, the
// counts of rows that project to one row added (their matches are equal:
// same side, join key and the columns the condition reads). The step is
// taken for a view whose one join has a state table whose index is known
// without building the dataflow (joinTableIndex).

// joinTableIndex returns the one join of view d's dataflow (streaming
// plan root, ups the plans of the views it computes itself) and its state
// table index, ok false when it cannot be told without building the
// dataflow (planTables) or the dataflow has more than one.
func joinTableIndex(d *catalog.Descriptor, root plan.Node, ups UpstreamPlans) (*plan.Join, uint16, bool) {
	return oneTable(d, root, ups, func(n plan.Node) *plan.Join { j, _ := n.(*plan.Join); return j })
}

// migrateJoinRows rewrites, in b, the state of view d's join (streaming
// plan root, format catalog.DataflowAppendOnlyJoins) into the narrowed
// rows of DataflowNarrowRows. ok false, b untouched: the join's table
// cannot be found without building the dataflow, or an entry is not of
// the old layout.
func migrateJoinRows(b *pebble.Batch, d *catalog.Descriptor, root plan.Node, ups UpstreamPlans) (bool, error) {
	j, idx, ok := joinTableIndex(d, root, ups)
	if !ok {
		return false, nil
	}
	_, narrowings := plan.PruneColumnsNarrowing(root)
	n, ok := narrowings[j]
	if !ok {
		return false, nil
	}
	widths := [2]int{len(j.Left.Schema()), len(j.Right.Schema())}
	return narrowJoinRows(b, b, widths, n, storage.StatePrefix(d.ID, idx))
}

// narrowJoinRows rewrites, in b, the join state under prefix
// (joinStateRowInKey, input rows of widths) with each row narrowed as n
// says. It is idempotent only through the view's format: the caller
// records the new format in b. ok false: an entry is not of the old
// layout (a row of its side's width, two counts), and nothing is written.
func narrowJoinRows(r storage.Reader, b *pebble.Batch, widths [2]int, n plan.JoinNarrowing, prefix []byte) (bool, error) {
	type entry struct {
		key            []byte
		count, matches int64
	}
	var (
		olds    [][]byte
		entries []*entry
		byKey   = map[string]*entry{}
		ok      = true
	)
	if len(n[0]) != widths[0] || len(n[1]) != widths[1] {
		return false, nil
	}
	err := storage.ScanPrefix(r, prefix, func(k, v []byte) error {
		side, jk, enc, count, matches, good := readRowInKeyEntry(k[len(prefix):], v, widths)
		if !good {
			ok = false
			return nil
		}
		row, _, err := keyenc.DecodeRow(enc, widths[side])
		if err != nil {
			return err
		}
		key := append([]byte(nil), prefix...)
		key = append(key, side)
		key = binary.AppendUvarint(key, uint64(len(jk)))
		key = append(key, jk...)
		key = keyenc.AppendRowValue(key, narrowRow(row, n[side]))
		olds = append(olds, append([]byte(nil), k...))
		if e := byKey[string(key)]; e != nil {
			e.count += count
			return nil
		}
		e := &entry{key: key, count: count, matches: matches}
		byKey[string(key)] = e
		entries = append(entries, e)
		return nil
	})
	if err != nil || !ok {
		return false, err
	}
	for _, k := range olds {
		if err := b.Delete(k, nil); err != nil {
			return false, err
		}
	}
	for _, e := range entries {
		v := binary.AppendVarint(nil, e.count)
		v = binary.AppendVarint(v, e.matches)
		if err := b.Set(e.key, v, nil); err != nil {
			return false, err
		}
	}
	return true, nil
}

// readRowInKeyEntry decodes a joinStateRowInKey entry (key after the
// operator's prefix, value): its side, join key, row encoding (a row of
// its side's width) and counts. A value may hold the row after the counts
// (a view moved from format 2), which is read past.
func readRowInKeyEntry(k, v []byte, widths [2]int) (side byte, jk, enc []byte, count, matches int64, ok bool) {
	if len(k) < 1 || k[0] > 1 {
		return 0, nil, nil, 0, 0, false
	}
	side = k[0]
	jk, enc, err := readLenPrefixed(k[1:])
	if err != nil {
		return 0, nil, nil, 0, 0, false
	}
	if _, rest, err := keyenc.DecodeRow(enc, widths[side]); err != nil || len(rest) != 0 {
		return 0, nil, nil, 0, 0, false
	}
	if v, err = readVarint(v, &count); err != nil {
		return 0, nil, nil, 0, 0, false
	}
	if _, err = readVarint(v, &matches); err != nil {
		return 0, nil, nil, 0, 0, false
	}
	return side, jk, enc, count, matches, true
}

// narrowRow is row with each column moved to its position in to (-1:
// dropped).
func narrowRow(row types.Row, to []int) types.Row {
	width := 0
	for _, p := range to {
		width = max(width, p+1)
	}
	out := make(types.Row, width)
	for i, p := range to {
		if p >= 0 {
			out[p] = row[i]
		}
	}
	return out
}
