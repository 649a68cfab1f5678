package exec

import (
	"encoding/binary"

	"github.com/cockroachdb/pebble/v2"

	"streamdb/catalog"
	"streamdb/plan"
	"streamdb/storage"
)

// The step to catalog.DataflowJoinStateByKey moves a join's entries from
// pages keyed by a growing page id (joinStateByPage: a page holds the
// rows one side added in an epoch, of any join keys) to pages keyed by
// side, join key and page id (joinStateByKey: a page holds one side's
// rows of one join key). What each entry holds (counts, row) is kept.
//
// A join of the new format pages a bucket's rows as they arrive: on an
// append-only (packed) side the bucket's newest page takes each new row
// until it holds joinPageBytes, on other sides every row has a page of
// its own. The old layout keeps each side's arrival order (pages in id
// order, entries in page order), so the step replays it bucket by bucket
// with that rule, and the new pages hold exactly the entries a join of the
// new format fed the same changes holds. Their ids differ: the new
// format's only have to be unique and growing within a bucket (a join
// with a bounded cache numbers them so, joinstate_keyed.go), and a new
// page takes the old id of its first entry's page, or one past the
// bucket's previous page when that is not larger. With no packed side
// every old page is one entry, the same ids both ways, and the new state
// is the twin's byte for byte.

// migrateJoinByKey rewrites, in b, view d's join state (streaming plan
// root, format catalog.DataflowSumSpecials) into the layout of
// DataflowJoinStateByKey. ok false, b untouched: the table cannot be
// found without building the dataflow, or a page is not of the old
// layout.
func migrateJoinByKey(b *pebble.Batch, d *catalog.Descriptor, root plan.Node, ups UpstreamPlans) (bool, error) {
	j, idx, ok := joinTableIndex(d, root, ups)
	if !ok {
		return false, nil
	}
	packed := [2]bool{appendOnly(j.Left), appendOnly(j.Right)}
	return joinPagesByKey(b, b, packed, storage.StatePrefix(d.ID, idx))
}

// joinPagesByKey rewrites, in b, the joinStateByPage state under prefix
// into joinStateByKey; packed says which sides' rows share pages.
func joinPagesByKey(r storage.Reader, b *pebble.Batch, packed [2]bool, prefix []byte) (bool, error) {
	// tails are the newest new page of each bucket, by side and join key.
	tails := [2]map[string]*joinPage{{}, {}}
	var pages []*joinPage // in the order made
	var olds [][]byte
	ok := true
	err := storage.ScanPrefix(r, prefix, func(k, v []byte) error {
		if len(k) != len(prefix)+8 {
			ok = false
			return nil
		}
		oldID := binary.BigEndian.Uint64(k[len(prefix):])
		olds = append(olds, append([]byte(nil), k...))
		for len(v) > 0 {
			e, jk, rest, err := readEntryHead(v)
			var row []byte
			if err == nil {
				row, v, err = readLenPrefixed(rest)
			}
			if err != nil {
				ok = false
				return nil
			}
			e.key, e.rowKey = string(jk), string(row)
			p := tails[e.side][e.key]
			if p == nil || !packed[e.side] || p.bytes >= joinPageBytes {
				id := oldID
				if p != nil && p.id >= id {
					id = p.id + 1
				}
				p = &joinPage{id: id, side: e.side, key: e.key}
				tails[e.side][e.key] = p
				pages = append(pages, p)
			}
			p.entries = append(p.entries, e)
			p.bytes += entryBytes(e)
		}
		return nil
	})
	if err != nil || !ok {
		return false, err
	}
	moves := make([]movedEntry, 0, len(olds)+len(pages))
	for _, k := range olds {
		moves = append(moves, movedEntry{old: k})
	}
	for _, p := range pages {
		var val []byte
		for _, e := range p.entries {
			val = appendKeyedEntry(val, e)
		}
		moves = append(moves, movedEntry{key: appendKeyedPageKey(append([]byte(nil), prefix...), 0, p), val: val})
	}
	return true, moveEntries(b, moves)
}
