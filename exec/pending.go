package exec

import (
	"bytes"
	"encoding/binary"
	"hash/maphash"
	"slices"

	"github.com/cockroachdb/pebble/v2"

	"streamdb/storage"
	"streamdb/storage/keyenc"
	"streamdb/types"
)

// pendingWrites collects an operator's state writes for the current epoch
// without allocating per write: keys and values are appended to one byte
// arena, reused every epoch, and a hash index keeps only the newest write
// of each key (so a group updated many times in an epoch, or deleted and
// re-inserted, costs one Pebble write). writeTo emits them in key order,
// which is what Pebble's memtable inserts fastest.
type pendingWrites struct {
	arena   []byte
	entries []pendingEntry
	// index maps a key's hash to the newest entry with that hash; entries
	// of colliding keys chain through pendingEntry.prev.
	index map[uint64]int32
	seed  maphash.Seed
	order []int32 // scratch for writeTo
	key   []byte  // scratch for writeTo
	// unsorted is set once a key arrives below the previous one.
	unsorted bool
}

// maxKeptArena is the arena capacity kept across epochs.
const maxKeptArena = 16 << 20

type pendingEntry struct {
	key, val [2]int32 // arena offsets [start, end)
	del      bool
	live     bool  // false once a newer write of the same key replaced it
	prev     int32 // previous entry with the same hash, -1 if none
}

func (p *pendingWrites) bytes(r [2]int32) []byte { return p.arena[r[0]:r[1]] }

// add records a write of a view row: its value is the stored form of
// EncodeViewValue. unique promises that key was not written before in
// this epoch (append-only row ids), which skips the index.
func (p *pendingWrites) add(key []byte, unique, del bool, row types.Row, count uint64) {
	e := p.begin(key, unique, del)
	if !del {
		p.arena = binary.AppendUvarint(p.arena, count)
		p.arena = keyenc.AppendRowValue(p.arena, row)
	}
	p.end(e)
}

// begin records key and retires the previous write of it in this epoch;
// the caller appends the value to the arena and calls end.
func (p *pendingWrites) begin(key []byte, unique, del bool) pendingEntry {
	if n := len(p.entries); n > 0 && !p.unsorted && bytes.Compare(p.bytes(p.entries[n-1].key), key) > 0 {
		p.unsorted = true
	}
	prev := int32(-1)
	if !unique {
		if p.index == nil {
			p.index = map[uint64]int32{}
			p.seed = maphash.MakeSeed()
		}
		h := maphash.Bytes(p.seed, key)
		if i, ok := p.index[h]; ok {
			prev = i
		}
		for i := prev; i >= 0; i = p.entries[i].prev {
			if e := &p.entries[i]; e.live && bytes.Equal(p.bytes(e.key), key) {
				e.live = false
				break
			}
		}
		p.index[h] = int32(len(p.entries))
	}
	e := pendingEntry{del: del, live: true, prev: prev}
	start := int32(len(p.arena))
	p.arena = append(p.arena, key...)
	e.key = [2]int32{start, int32(len(p.arena))}
	return e
}

// end records e with the value appended since begin.
func (p *pendingWrites) end(e pendingEntry) {
	e.val = [2]int32{e.key[1], int32(len(p.arena))}
	p.entries = append(p.entries, e)
}

// set records key -> (count, row).
func (p *pendingWrites) set(key []byte, row types.Row, count uint64) {
	p.add(key, false, false, row, count)
}

// setNew records key -> (count, row) for a key not written before in this
// epoch.
func (p *pendingWrites) setNew(key []byte, row types.Row, count uint64) {
	p.add(key, true, false, row, count)
}

// del records the deletion of key.
func (p *pendingWrites) del(key []byte) { p.add(key, false, true, nil, 0) }

// write records key -> val, an operator's own encoding (val nil with del
// for a deletion); unique as for add.
func (p *pendingWrites) write(key, val []byte, del, unique bool) {
	e := p.begin(key, unique, del)
	p.arena = append(p.arena, val...)
	p.end(e)
}

// writeTo writes the newest write of every key under prefix into b, in
// key order, and empties p. (Batch.Set copies, so the arena is reused.)
func (p *pendingWrites) writeTo(b *pebble.Batch, prefix []byte) error {
	return p.drain(prefix, func(key, val []byte, del bool) error {
		if del {
			return b.Delete(key, nil)
		}
		return b.Set(key, val, nil)
	})
}

// writeRun writes the newest write of every key under prefix as a run of
// sp, and empties p.
func (p *pendingWrites) writeRun(sp *storage.Spill, prefix []byte) error {
	if len(p.entries) == 0 {
		return nil
	}
	rw, err := sp.NewRun()
	if err != nil {
		return err
	}
	if err := p.drain(prefix, rw.Add); err != nil {
		sp.Finish(rw)
		return err
	}
	return sp.Finish(rw)
}

// drain passes the newest write of every key under prefix to fn, in key
// order, and empties p. fn must not keep key or val.
func (p *pendingWrites) drain(prefix []byte, fn func(key, val []byte, del bool) error) error {
	p.order = p.order[:0]
	for i := range p.entries {
		if p.entries[i].live {
			p.order = append(p.order, int32(i))
		}
	}
	if p.unsorted {
		slices.SortFunc(p.order, func(a, c int32) int {
			return bytes.Compare(p.bytes(p.entries[a].key), p.bytes(p.entries[c].key))
		})
	}
	for _, i := range p.order {
		e := &p.entries[i]
		p.key = append(append(p.key[:0], prefix...), p.bytes(e.key)...)
		var val []byte
		if !e.del {
			val = p.bytes(e.val)
		}
		if err := fn(p.key, val, e.del); err != nil {
			return err
		}
	}
	p.arena, p.entries, p.unsorted = p.arena[:0], p.entries[:0], false
	if cap(p.arena) > maxKeptArena {
		// A huge epoch (a backfill) should not pin its arena forever.
		p.arena, p.entries, p.order, p.index = nil, nil, nil, nil
	}
	clear(p.index)
	return nil
}
