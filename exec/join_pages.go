package exec

import (
	"encoding/binary"
	"fmt"
)

// Join state in pages (joinStateByPage). Pebble spends about a microsecond
// per key in every flush and compaction, whatever the key's size, and a
// join of a stream keeps every row it has seen: as one key each, Nexmark
// q7's 1.8M bids cost more in compactions than the join itself. So the
// rows a side adds in an epoch are stored together, in pages of up to
// joinPageBytes under one key each (a growing page id, so new pages sort
// after old ones and Pebble appends them).
//
// Packing pays off only where stored rows rarely change: a change rewrites
// the row's whole page. So only append-only sides are packed: their rows
// never change once stored (equal rows are separate entries there, see
// joinBucket), except an outer side's match counts. On other sides every
// row gets a page of its own, much like the joinStateByID layout.

// joinPageBytes is how much a packed page holds before the next row starts
// a new one.
const joinPageBytes = 8 << 10

// joinPage is one stored page: its id (the state key) and its entries.
// Entries whose count fell to zero stay listed until the page is next
// written.
type joinPage struct {
	id      uint64
	entries []*joinEntry
	bytes   int
	dirty   bool // in op.dirtyPages for the current epoch
	// Under joinStateByKey: the side and join key its key starts with.
	side byte
	key  string
}

// entryBytes is about what e takes in a page.
func entryBytes(e *joinEntry) int { return len(e.key) + len(e.rowKey) + 8 }

// markPageDirty records p for rewriting at this barrier, once.
func (op *joinOp) markPageDirty(p *joinPage) {
	if !p.dirty {
		p.dirty = true
		op.dirtyPages = append(op.dirtyPages, p)
	}
}

// writePages is the barrier's write under joinStateByPage: the epoch's new
// entries go to new pages (per side: a page holds one side's rows), and
// every page with a changed or removed entry is rewritten, or deleted once
// empty.
func (op *joinOp) writePages() {
	var fresh [2]*joinPage
	for _, e := range op.dirty {
		e.dirty = false
		if e.page != nil {
			op.markPageDirty(e.page)
			continue
		}
		if e.count <= 0 {
			continue // came and went within the epoch: never stored
		}
		var p *joinPage
		if op.format == joinStateByKey {
			p = op.keyedPageFor(e)
		} else {
			p = fresh[e.side]
			if p == nil || !op.packed[e.side] || p.bytes >= joinPageBytes {
				p = &joinPage{id: op.nextID}
				op.nextID++
				fresh[e.side] = p
				op.markPageDirty(p)
			}
		}
		p.entries = append(p.entries, e)
		p.bytes += entryBytes(e)
		e.page = p
	}
	for _, p := range op.dirtyPages {
		p.dirty = false
		live := p.entries[:0]
		p.bytes = 0
		for _, e := range p.entries {
			if e.count > 0 {
				live = append(live, e)
				p.bytes += entryBytes(e)
			}
		}
		clear(p.entries[len(live):]) // let removed entries go
		p.entries = live
		if op.format == joinStateByKey {
			op.keyOut = appendKeyedPageKey(op.keyOut[:0], op.vnodes, p)
		} else {
			op.keyOut = binary.BigEndian.AppendUint64(op.keyOut[:0], p.id)
		}
		if len(live) == 0 {
			op.pending.write(op.keyOut, nil, true, true)
			continue
		}
		op.valOut = op.valOut[:0]
		for _, e := range live {
			if op.format == joinStateByKey {
				op.valOut = appendKeyedEntry(op.valOut, e)
			} else {
				op.valOut = appendPageEntry(op.valOut, e)
			}
		}
		op.pending.write(op.keyOut, op.valOut, false, true)
	}
	clear(op.dirtyPages)
	op.dirtyPages = op.dirtyPages[:0]
}

// appendPageEntry appends e as its head (appendEntryHead), then
// len(row)|row.
func appendPageEntry(v []byte, e *joinEntry) []byte {
	v = appendEntryHead(v, e)
	v = binary.AppendUvarint(v, uint64(len(e.rowKey)))
	return append(v, e.rowKey...)
}

// restorePage puts the entries of one stored page (key after the
// operator's prefix, value) into the join's buckets.
func (op *joinOp) restorePage(k, v []byte) error {
	if len(k) != 8 {
		return fmt.Errorf("join state: bad page key")
	}
	p := &joinPage{id: binary.BigEndian.Uint64(k)}
	op.nextID = max(op.nextID, p.id+1)
	for len(v) > 0 {
		e, jk, rest, err := readEntryHead(v)
		if err != nil {
			return err
		}
		var row []byte
		if row, v, err = readLenPrefixed(rest); err != nil {
			return err
		}
		b := op.bucket(e.side, jk)
		e.key, e.rowKey, e.page = b.key, string(row), p
		b.put(e, op.listed(e.side))
		p.entries = append(p.entries, e)
		p.bytes += entryBytes(e)
	}
	return nil
}
